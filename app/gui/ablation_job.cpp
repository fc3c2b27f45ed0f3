#include "gui/ablation_job.h"

#include <QMetaObject>

#include <algorithm>

#include "mechanism/ablation_runner.h"
#include "model/init.h"
#include "tasks/batch.h"
#include "tasks/dataset.h"

namespace nope::gui {

AblationJob::AblationJob(QObject* parent) : QObject(parent) {}

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
            const int promptLength = longestPrompt(spec.task);
            if (promptLength > spec.model.blockSize) {
                throw std::invalid_argument("context: " + std::to_string(spec.model.blockSize) +
                                            " is shorter than the " + taskName(spec.task) +
                                            " prompts (allowed: " + std::to_string(promptLength) +
                                            " or more)");
            }
            const TaskData data = makeTaskData(spec.task, spec.train.data);
            const PromptSet prompts =
                makePromptSet(data, std::min(samples, static_cast<int>(data.test.size())),
                              analysisPromptSeed(spec.train.data.seed));
            Gpt model = seededModel(spec.model, spec.train.seed);
            AblationConfig usable = config;  // eqx needs a dimension per token
            if (promptLength > spec.model.nEmbd) {
                usable.ablations.erase(
                    std::remove(usable.ablations.begin(), usable.ablations.end(), Ablation::Eqx),
                    usable.ablations.end());
            }
            AblationTable table =
                runAblations(*model, prompts.tokens, usable, prompts.padded, &m_cancel);
            QMetaObject::invokeMethod(this, [this, table = std::move(table)] {
                m_running = false;
                Q_EMIT finished(table);
            });
        } catch (const std::exception& e) {
            const QString message = QString::fromStdString(e.what());
            QMetaObject::invokeMethod(this, [this, message] {
                m_running = false;
                Q_EMIT failed(message);
            });
        }
    });
    return true;
}

}  // namespace nope::gui
