#include "gui/ablation_job.h"

#include <algorithm>

#include "gui/form_model.h"
#include "mechanism/ablation_runner.h"
#include "util/error_text.h"

namespace nope::gui {

AblationJob::AblationJob(QObject* parent) : QObject(parent), m_calls(new CallQueue(this)) {}

AblationJob::~AblationJob() {
    m_cancel = true;
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

QString AblationJob::describe(const RunSpec& spec, int samples) {
    return QString(
               "The form's model at init: %1 layers x %2 wide, %3 heads, %4 attention, init %5, "
               "seed %6; %7 %8 test prompts.")
        .arg(spec.model.nLayer)
        .arg(spec.model.nEmbd)
        .arg(spec.model.nHead)
        .arg(QString::fromStdString(toString(spec.model.attention)))
        .arg(QString::fromStdString(toString(spec.model.init.scheme)))
        .arg(spec.train.seed)
        .arg(std::min(samples, spec.train.data.testSize))
        .arg(QString::fromStdString(taskName(spec.task)));
}

bool AblationJob::start(const RunSpec& spec, const AblationConfig& config, int samples) {
    if (m_running) {
        return false;
    }
    if (m_thread.joinable()) {
        m_thread.join();
    }
    m_running = true;
    m_cancel = false;
    m_thread = std::thread([this, spec, config, samples] {
        try {
            FormModel form = formModelAtInit(spec, samples);
            AblationConfig usable = config;  // eqx needs a dimension per token
            if (longestPrompt(spec.task) > spec.model.nEmbd) {
                usable.ablations.erase(
                    std::remove(usable.ablations.begin(), usable.ablations.end(), Ablation::Eqx),
                    usable.ablations.end());
            }
            AblationTable table = runAblations(*form.model, form.prompts.tokens, usable,
                                               form.prompts.padded, &m_cancel);
            m_calls->post([this, table = std::move(table)] {
                m_running = false;
                Q_EMIT finished(table);
            });
        } catch (const std::exception& e) {
            const QString message = QString::fromStdString(nope::errorText(e));
            m_calls->post([this, message] {
                m_running = false;
                Q_EMIT failed(message);
            });
        }
    });
    return true;
}

}  // namespace nope::gui
