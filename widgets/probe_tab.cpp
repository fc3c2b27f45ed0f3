#include "widgets/probe_tab.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

#include "widgets/probe_panel.h"

namespace nope::ui {

ProbeTab::ProbeTab(QWidget* parent)
    : QWidget(parent),
      m_panel(new ProbePanel),
      m_size(new QComboBox),
      m_data(new QComboBox),
      m_run(new QPushButton("Run probes")),
      m_cancel(new QPushButton("Cancel")),
      m_progress(new QProgressBar),
      m_message(new QLabel) {
    m_size->addItems({"fast", "full"});
    m_size->setToolTip(
        "fast: a small MLP, seconds; full: the authors' 4-layer MLP and 20 epochs "
        "(minutes for a 6-layer model)");
    m_data->addItems({"random", "task"});
    m_data->setToolTip(
        "random: strings over 5678 to train and 1234 to test, so that token "
        "identity cannot give position away; task: the task's test prompts");
    m_run->setToolTip(
        "probe the current model (initialized, training, paused, finished or "
        "loaded); Cancel ends it between epochs");
    m_cancel->setToolTip(
        "end the probes running (at initialization or asked for) at their next "
        "epoch; nothing is kept");
    m_cancel->setEnabled(false);
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_progress->setTextVisible(true);
    m_progress->setFormat("%v / %m epochs");
    m_progress->setMinimumWidth(170);
    m_progress->setMaximumWidth(240);
    m_message->setWordWrap(false);

    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel("probe"));
    row->addWidget(m_size);
    row->addWidget(new QLabel("on"));
    row->addWidget(m_data);
    row->addWidget(m_run);
    row->addWidget(m_cancel);
    row->addWidget(m_progress);
    row->addWidget(m_message, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(row);
    layout->addWidget(m_panel, 1);
    connect(m_run, &QPushButton::clicked, this, &ProbeTab::runClicked);
    connect(m_cancel, &QPushButton::clicked, this, &ProbeTab::cancelClicked);
    setRunnable(false);
}

ProbeConfig ProbeTab::config(const ProbeConfig& base) const {
    ProbeConfig config = *probePreset(m_size->currentText().toStdString());
    config.seed = base.seed;
    config.length = base.length;
    config.points = base.points;
    config.data = *parseProbeData(m_data->currentText().toStdString());
    return config;
}

void ProbeTab::setRunnable(bool runnable) {
    m_run->setEnabled(runnable);
}

void ProbeTab::showProgress(int done, int total) {
    m_progress->setRange(0, std::max(1, total));
    m_progress->setValue(done);
    m_cancel->setEnabled(total > 0 && done < total);
}

void ProbeTab::showMessage(const QString& message) {
    m_message->setText(message);
}

QString ProbeTab::message() const {
    return m_message->text();
}

}  // namespace nope::ui
