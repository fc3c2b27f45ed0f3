#include "widgets/run_controls.h"

#include <QGridLayout>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

#include <cmath>

namespace nope::ui {

QString formatDuration(double seconds) {
    const int s = static_cast<int>(std::lround(std::max(0.0, seconds)));
    return s >= 3600 ? QString("%1h%2m").arg(s / 3600).arg((s % 3600) / 60, 2, 10, QChar('0'))
                     : QString("%1m%2s").arg(s / 60).arg(s % 60, 2, 10, QChar('0'));
}

RunControls::RunControls(QWidget* parent)
    : QWidget(parent),
      m_initialize(new QPushButton("Initialize")),
      m_train(new QPushButton("Train")),
      m_pause(new QPushButton("Pause")),
      m_stop(new QPushButton("Stop")),
      m_reset(new QPushButton("Reset")),
      m_progress(new QProgressBar),
      m_text(new QLabel(" ")) {
    m_initialize->setToolTip("build the model at initialization and show its heatmaps");
    m_stop->setToolTip("stop after the current step; the run folder keeps everything so far");
    m_reset->setToolTip("discard the model and the history");
    auto* layout = new QVBoxLayout(this);
    auto* buttons = new QGridLayout;  // two rows: the left column stays narrow on small screens
    buttons->addWidget(m_initialize, 0, 0);
    buttons->addWidget(m_train, 0, 1);
    buttons->addWidget(m_pause, 0, 2);
    buttons->addWidget(m_stop, 1, 1);
    buttons->addWidget(m_reset, 1, 2);
    layout->addLayout(buttons);
    layout->addWidget(m_progress);
    m_text->setWordWrap(true);  // a second line rather than a wider form, where the limit is named
    layout->addWidget(m_text);
    clearProgress();
    connect(m_initialize, &QPushButton::clicked, this, &RunControls::initializeClicked);
    connect(m_train, &QPushButton::clicked, this, &RunControls::trainClicked);
    connect(m_pause, &QPushButton::clicked, this, &RunControls::pauseClicked);
    connect(m_stop, &QPushButton::clicked, this, &RunControls::stopClicked);
    connect(m_reset, &QPushButton::clicked, this, &RunControls::resetClicked);
}

void RunControls::setState(State state, bool formValid, bool trained, const QString& notTrainable) {
    const bool running = state == State::Training || state == State::Paused;
    const bool busy = running || state == State::Busy;
    m_initialize->setEnabled(!busy && formValid);
    m_train->setEnabled(!busy && (formValid || trained) && notTrainable.isEmpty());
    m_train->setText(trained ? "Continue" : "Train");
    m_train->setToolTip(!notTrainable.isEmpty() ? notTrainable
                        : trained               ? "train on from the model's step"
                                  : "train the model (a new one if the form changed since "
                                    "Initialize)");
    m_pause->setEnabled(running);
    m_pause->setText(state == State::Paused ? "Resume" : "Pause");
    m_stop->setEnabled(running);
    m_reset->setEnabled(state != State::Busy);
}

void RunControls::clearProgress() {
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_text->setText(" ");
}

QString RunControls::progressText() const {
    return m_text->text().trimmed();
}

void RunControls::showProgress(const Snapshot& p) {
    m_progress->setRange(0, std::max(1, p.totalSteps));
    m_progress->setValue(p.step);
    QString text = QString("step %1/%2").arg(p.step).arg(p.totalSteps);
    if (p.tokensPerSecond > 0) {
        text +=
            QString(" · %1 tok/s · %2 left")
                .arg(QLocale().toString(qRound(p.tokensPerSecond)), formatDuration(p.etaSeconds));
        if (p.limitStep > 0) {  // the time limit ends the run before its steps do
            text += QString(" (time limit, near step %1)").arg(QLocale().toString(p.limitStep));
        }
    }
    if (p.eval.total > 0) {
        text +=
            QString(" · test acc %1% (step %2)").arg(p.eval.accuracy, 0, 'f', 1).arg(p.eval.step);
    }
    m_text->setText(text);
}

}  // namespace nope::ui
