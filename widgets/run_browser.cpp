#include "widgets/run_browser.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

namespace nope::ui {

namespace {

const QStringList kColumns = {"run", "task", "preset", "model", "steps", "best accuracy", "date"};

QString modelText(const RunSummary& run) {
    QString text = QString("%1 x %2").arg(run.layers).arg(run.dim);
    if (!run.positional.empty() && run.positional != "none") {
        text += " " + QString::fromStdString(run.positional) + " PE";
    }
    if (run.attention == "bidirectional") {
        text += " bidir.";
    }
    return text;
}

QTableWidgetItem* cell(const QString& text) {
    auto* item = new QTableWidgetItem(text);
    item->setFlags(item->flags() & ~Qt::ItemIsEditable);
    return item;
}

}  // namespace

RunBrowser::RunBrowser(QWidget* parent)
    : QWidget(parent),
      m_root(new QLineEdit(this)),
      m_table(new QTableWidget(this)),
      m_count(new QLabel(this)) {
    auto* choose = new QPushButton("Choose…", this);
    auto* refreshButton = new QPushButton("Refresh", this);
    m_root->setToolTip(
        "the folder whose run folders are listed (by default $NOPESCOPE_RUNS or "
        "./runs)");
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel("runs in"));
    row->addWidget(m_root, 1);
    row->addWidget(choose);
    row->addWidget(refreshButton);
    row->addWidget(m_count);
    m_table->setColumnCount(kColumns.size());
    m_table->setHorizontalHeaderLabels(kColumns);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->setVisible(false);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->setToolTip("tick runs to compare their curves, scores and heatmaps");
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(row);
    layout->addWidget(m_table, 1);
    connect(m_root, &QLineEdit::editingFinished, this, &RunBrowser::refresh);
    connect(refreshButton, &QPushButton::clicked, this, &RunBrowser::refresh);
    connect(choose, &QPushButton::clicked, this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, "Folder of run folders", m_root->text());
        if (!dir.isEmpty()) {
            setRoot(dir);
        }
    });
    connect(m_table, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* item) {
        if (!m_filling && item->column() == 0) {
            Q_EMIT selectionChanged();
        }
    });
}

void RunBrowser::setRoot(const QString& root) {
    m_root->setText(root);
    refresh();
}

QString RunBrowser::root() const {
    return m_root->text();
}

void RunBrowser::refresh() {
    // Keep the ticks of the runs still listed.
    std::vector<std::filesystem::path> ticked;
    for (const auto& run : checkedRuns()) {
        ticked.push_back(run.dir);
    }
    m_runs = listRuns(m_root->text().toStdString());
    fill();
    m_filling = true;
    for (size_t i = 0; i < m_runs.size(); ++i) {
        const bool was = std::find(ticked.begin(), ticked.end(), m_runs[i].dir) != ticked.end();
        m_table->item(static_cast<int>(i), 0)->setCheckState(was ? Qt::Checked : Qt::Unchecked);
    }
    m_filling = false;
    Q_EMIT selectionChanged();
}

void RunBrowser::fill() {
    m_filling = true;
    m_table->setRowCount(static_cast<int>(m_runs.size()));
    for (size_t i = 0; i < m_runs.size(); ++i) {
        const RunSummary& run = m_runs[i];
        const int r = static_cast<int>(i);
        auto* name = cell(QString::fromStdString(run.name));
        name->setFlags(name->flags() | Qt::ItemIsUserCheckable);
        name->setCheckState(Qt::Unchecked);
        name->setToolTip(QString::fromStdString(run.dir.string()));
        m_table->setItem(r, 0, name);
        if (!run.error.empty()) {
            name->setFlags(name->flags() & ~Qt::ItemIsUserCheckable & ~Qt::ItemIsEnabled);
            name->setToolTip(QString::fromStdString(run.error));
            for (int c = 1; c < kColumns.size(); ++c) {
                m_table->setItem(r, c, cell(c == 1 ? "unreadable" : ""));
            }
            continue;
        }
        m_table->setItem(r, 1, cell(QString::fromStdString(run.task)));
        m_table->setItem(r, 2, cell(QString::fromStdString(run.preset)));
        m_table->setItem(r, 3, cell(modelText(run)));
        m_table->setItem(r, 4, cell(QString("%1 / %2").arg(run.lastStep).arg(run.totalSteps)));
        m_table->setItem(
            r, 5,
            cell(std::isfinite(run.bestAccuracy) ? QString::number(run.bestAccuracy, 'f', 1) + "%"
                                                 : "-"));
        m_table->setItem(r, 6, cell(QString::fromStdString(run.date)));
    }
    m_count->setText(QString("%1 runs").arg(m_runs.size()));
    m_filling = false;
}

std::vector<RunSummary> RunBrowser::checkedRuns() const {
    std::vector<RunSummary> out;
    for (int r = 0; r < m_table->rowCount() && r < static_cast<int>(m_runs.size()); ++r) {
        if (m_table->item(r, 0) && m_table->item(r, 0)->checkState() == Qt::Checked) {
            out.push_back(m_runs[static_cast<size_t>(r)]);
        }
    }
    return out;
}

void RunBrowser::setChecked(int row, bool checked) {
    if (auto* item = m_table->item(row, 0)) {
        item->setCheckState(checked ? Qt::Checked : Qt::Unchecked);
    }
}

}  // namespace nope::ui
