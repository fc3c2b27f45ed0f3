#include "widgets/sweep_tab.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include "widgets/plot_style.h"
#include "widgets/qcp.h"

namespace nope::ui {

SweepTab::SweepTab(QWidget* parent) : QWidget(parent) {
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(definitionBox());
    split->addWidget(resultsBox());
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(split);
    setRunning(false);
    redraw();
}

QWidget* SweepTab::definitionBox() {
    auto* box = new QGroupBox("Sweep", this);
    m_grid = new QLineEdit("layers=6,12,24 dim=192,384,768", box);
    m_grid->setToolTip("settings and their values, by the CLI's names: name=v1,v2 name=v1,v2");
    m_seeds = new QSpinBox(box);
    m_seeds->setRange(1, 1000);
    m_seeds->setValue(5);
    m_seeds->setToolTip("each cell runs with seeds 1..N; the summary is over seeds");
    m_mode = new QComboBox(box);
    m_mode->addItem("at initialization", QString());
    m_mode->addItem("trained, quick preset", "quick");
    m_mode->addItem("trained, paper preset", "paper");
    m_probes = new QCheckBox("position probes", box);
    m_probes->setToolTip("at init, also run the position probes of every run");
    m_fixed = new QLineEdit("--task addition", box);
    m_fixed->setToolTip(
        "flags for every run, as on the command line (nopescope-cli analyze, or "
        "train when trained)");
    m_jobs = new QSpinBox(box);
    m_jobs->setRange(0, 256);
    m_jobs->setSpecialValueText("one per core");
    m_out = new QLineEdit(box);
    m_out->setPlaceholderText("the sweep folder (empty: a new one under the runs folder)");
    m_run = new QPushButton("Run sweep", box);
    m_stop = new QPushButton("Stop", box);
    m_open = new QPushButton("Open sweep...", box);
    m_progress = new QProgressBar(box);
    m_status = new QLabel(box);
    m_status->setWordWrap(true);
    auto* form = new QFormLayout;
    form->addRow("grid", m_grid);
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel("seeds"));
    row->addWidget(m_seeds);
    row->addWidget(m_mode);
    row->addWidget(m_probes);
    row->addWidget(new QLabel("jobs"));
    row->addWidget(m_jobs);
    row->addStretch(1);
    form->addRow(row);
    form->addRow("fixed flags", m_fixed);
    form->addRow("folder", m_out);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_run);
    buttons->addWidget(m_stop);
    buttons->addWidget(m_open);
    buttons->addWidget(m_progress, 1);
    auto* layout = new QVBoxLayout(box);
    layout->addLayout(form);
    layout->addLayout(buttons);
    layout->addWidget(m_status);
    connect(m_run, &QPushButton::clicked, this, [this] { Q_EMIT runRequested(request()); });
    connect(m_stop, &QPushButton::clicked, this, &SweepTab::stopRequested);
    connect(m_open, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, "Open a sweep folder");
        if (!dir.isEmpty()) {
            Q_EMIT openRequested(dir);
        }
    });
    return box;
}

QWidget* SweepTab::resultsBox() {
    auto* box = new QWidget(this);
    m_stage = new QComboBox(box);
    m_point = new QComboBox(box);
    m_layer = new QComboBox(box);
    m_x = new QComboBox(box);
    m_y = new QComboBox(box);
    m_x->setToolTip("the setting along the horizontal axis (both figures)");
    m_y->setToolTip("the setting along the vertical axis of the heatmap");
    m_layer->setToolTip("the layer whose score the heatmap shows");
    auto* row = new QHBoxLayout;
    for (auto [label, combo] : {std::pair{"stage", m_stage},
                                {"point", m_point},
                                {"layer", m_layer},
                                {"x", m_x},
                                {"y", m_y}}) {
        row->addWidget(new QLabel(label));
        row->addWidget(combo);
    }
    row->addStretch(1);
    m_heldLayout = new QFormLayout;
    m_figures = new QTabWidget(box);
    m_heatmap = new QCustomPlot(box);
    m_lines = new QCustomPlot(box);
    m_figures->addTab(m_heatmap, "Heatmap over two settings");
    m_figures->addTab(m_lines, "Lines over one setting");
    for (QCustomPlot* plot : {m_heatmap, m_lines}) {
        plot->setMinimumHeight(260);
        applyPlotTheme(plot, palette());
        keepTicksApart(plot);
    }
    m_table = new QTableWidget(box);
    m_table->verticalHeader()->setVisible(false);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    auto* side = new QSplitter(Qt::Horizontal, box);
    side->addWidget(m_figures);
    side->addWidget(m_table);
    side->setStretchFactor(0, 3);
    side->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(row);
    layout->addLayout(m_heldLayout);
    layout->addWidget(side, 1);
    for (QComboBox* combo : {m_stage, m_point, m_layer, m_x, m_y}) {
        connect(combo, &QComboBox::currentIndexChanged, this, [this] {
            if (!m_filling) {
                redraw();
            }
        });
    }
    return box;
}

SweepRequest SweepTab::request() const {
    SweepRequest r;
    r.grid = m_grid->text().trimmed();
    r.seeds = m_seeds->value();
    r.preset = m_mode->currentData().toString();
    r.probes = m_probes->isChecked();
    r.fixed = QProcess::splitCommand(m_fixed->text());  // "quoted values" stay one
    r.jobs = m_jobs->value();
    r.out = m_out->text().trimmed();
    return r;
}

void SweepTab::setRequest(const SweepRequest& r) {
    m_grid->setText(r.grid);
    m_seeds->setValue(r.seeds);
    m_mode->setCurrentIndex(std::max(0, m_mode->findData(r.preset)));
    m_probes->setChecked(r.probes);
    QStringList shown;
    for (const QString& flag : r.fixed) {
        shown << (flag.contains(' ') || flag.isEmpty() ? '"' + flag + '"' : flag);
    }
    m_fixed->setText(shown.join(' '));
    m_jobs->setValue(r.jobs);
    m_out->setText(r.out);
}

void SweepTab::setTask(const QString& task) {
    SweepRequest r = request();
    const qsizetype at = r.fixed.indexOf("--task");
    if (at >= 0 && at + 1 < r.fixed.size()) {
        r.fixed[at + 1] = task;
    } else {
        r.fixed.removeAll("--task");
        r.fixed = QStringList{"--task", task} + r.fixed;
    }
    setRequest(r);
}

void SweepTab::setRunning(bool running) {
    m_run->setEnabled(!running);
    m_open->setEnabled(!running);
    m_stop->setEnabled(running);
    for (QWidget* w : std::initializer_list<QWidget*>{m_grid, m_seeds, m_mode, m_probes, m_fixed,
                                                      m_jobs, m_out}) {
        w->setEnabled(!running);
    }
}

void SweepTab::setProgress(int done, int failed, int total, const QString& text) {
    m_progress->setRange(0, std::max(1, total));
    m_progress->setValue(done + failed);
    m_progress->setFormat(
        failed > 0 ? QString("%1 of %2 runs (%3 failed)").arg(done).arg(total).arg(failed)
                   : QString("%1 of %2 runs").arg(done).arg(total));
    m_status->setText(text);
}

void SweepTab::setResults(study::SweepResults results, const QString& folder) {
    m_results = std::move(results);
    if (!folder.isEmpty()) {
        m_out->setText(folder);
    }
    fillChoices();
    redraw();
}

void SweepTab::setAxes(int x, int y) {
    m_x->setCurrentIndex(x);
    m_y->setCurrentIndex(y);
}

void SweepTab::setLayer(int layer) {
    m_layer->setCurrentIndex(std::max(0, m_layer->findData(layer)));
}

}  // namespace nope::ui
