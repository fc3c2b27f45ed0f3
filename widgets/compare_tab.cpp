#include "widgets/compare_tab.h"

#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>

#include "util/error_text.h"
#include "widgets/compare_curves.h"
#include "widgets/run_browser.h"
#include "widgets/side_by_side.h"

namespace nope::ui {

CompareTab::CompareTab(QWidget* parent)
    : QWidget(parent),
      m_browser(new RunBrowser(this)),
      m_curves(new CompareCurves(this)),
      m_side(new SideBySide(this)),
      m_views(new QTabWidget(this)) {
    m_views->addTab(m_curves, "Curves and scores");
    m_views->addTab(m_side, "Side by side");
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_browser);
    split->addWidget(m_views);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 4);
    m_browser->setMinimumHeight(150);  // five runs in view
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(split);
    connect(m_browser, &RunBrowser::selectionChanged, this, &CompareTab::load);
}

void CompareTab::load() {
    std::vector<ComparedRun> runs;
    QStringList problems, rowsLeftOut;
    for (const RunSummary& run : m_browser->checkedRuns()) {
        try {
            runs.push_back({run, readRunCurves(run.dir)});
            for (const auto& p : runs.back().curves.problems) {
                rowsLeftOut << QString::fromStdString(p);
            }
        } catch (const std::exception& e) {
            problems << QString::fromStdString(nope::errorText(e));
        }
    }
    QStringList parts;
    if (!problems.isEmpty()) {
        parts << "Left out of the comparison: " + problems.join("\n");
    }
    if (!rowsLeftOut.isEmpty()) {
        parts << "Compared without a row: " + rowsLeftOut.join("\n");
    }
    m_problem = parts.join("\n");
    if (!m_problem.isEmpty()) {
        Q_EMIT problemFound(m_problem);
    }
    std::vector<RunSummary> chosen;
    for (const auto& run : runs) {
        chosen.push_back(run.summary);
    }
    m_curves->setRuns(std::move(runs));
    m_side->setRuns(std::move(chosen));
}

}  // namespace nope::ui
