#include "gui/run_cost_estimate.h"

#include <QMetaObject>

#include <exception>

#include "gui/subject.h"
#include "training/run_cost.h"
#include "training/trainer.h"
#include "util/error_text.h"

namespace nope::gui {

RunCostEstimate::RunCostEstimate(QObject* parent) : QObject(parent) {
    m_settle.setSingleShot(true);
    m_settle.setInterval(kSettleMs);
    connect(&m_settle, &QTimer::timeout, this, &RunCostEstimate::start);
}

RunCostEstimate::~RunCostEstimate() {
    join();
}

void RunCostEstimate::request(const RunSpec& spec) {
    m_pending = spec;
    m_settle.start();
}

void RunCostEstimate::cancel() {
    m_pending.reset();
    m_settle.stop();
}

void RunCostEstimate::join() {
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

void RunCostEstimate::start() {
    if (!m_pending) {
        return;
    }
    if (m_busy) {  // one at a time: this one waits for the timing under way
        m_settle.start();
        return;
    }
    join();
    const RunSpec spec = *m_pending;
    m_pending.reset();
    m_busy = true;
    m_thread = std::thread([this, spec] {
        double seconds = -1.0;
        QString text;
        try {
            Trainer trainer(spec.task, spec.model, spec.train);
            RunCostOptions options;
            options.stepSeconds = kStepSeconds;
            options.stepRows = kStepRows;
            options.evalExamples = kEvalExamples;
            options.probeEpochs = false;
            const RunCost cost = estimateRunCost(trainer, options);
            seconds = cost.seconds();
            text = QString::fromStdString(describe(cost));
        } catch (const std::exception& e) {
            text = QString::fromStdString(errorText(e));
        }
        const QString key = QString::fromStdString(specKey(spec));
        // the destructor joins this thread before the object goes: `this` is alive here
        QMetaObject::invokeMethod(
            this,
            [this, key, seconds, text] {
                m_busy = false;
                Q_EMIT estimated(key, seconds, text);
            },
            Qt::QueuedConnection);
    });
}

}  // namespace nope::gui
