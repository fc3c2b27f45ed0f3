// The Sweep tab: define a grid over settings (the CLI's `sweep` underneath), run it with
// progress, and see its summary over seeds as a heatmap of the adjacency score over two settings
// for one layer, as lines with 95% error bars over one setting (a line per layer), and as the
// table beside. The tab draws and asks; the window runs the sweep (gui/sweep_runner.h).
#pragma once

#include <QStringList>
#include <QWidget>

#include <vector>

#include "study/results.h"
#include "widgets/sweep_plots.h"
#include "widgets/table_data.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QFormLayout;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QTabWidget;

namespace nope::ui {

struct SweepRequest {
    QString grid;    // "layers=6,12,24 dim=192,384,768"
    int seeds = 5;   // seeds 1..N
    QString preset;  // empty: at init; "quick" or "paper": trained with it
    bool probes = false;
    QStringList fixed;  // fixed flags, as a user types them on the command line
    int jobs = 0;       // 0: one per core
    QString out;        // the sweep folder
};

class SweepTab : public QWidget {
    Q_OBJECT

public:
    explicit SweepTab(QWidget* parent = nullptr);

    SweepRequest request() const;
    void setRequest(const SweepRequest& request);
    // The task of the sweep's runs (its fixed flag --task), replaced or added; the window gives
    // the form's, so that a sweep starts from the task on screen.
    void setTask(const QString& task);
    void setRunning(bool running);
    // done, failed and total runs, and one line of what happens
    void setProgress(int done, int failed, int total, const QString& text);
    void setResults(study::SweepResults results, const QString& folder);
    const study::SweepResults& results() const { return m_results; }

    QCustomPlot* heatmapPlot() const { return m_heatmap; }
    QCustomPlot* linesPlot() const { return m_lines; }
    QTabWidget* figures() const { return m_figures; }  // heatmap, lines
    TableData tableData() const { return m_data; }
    QString figureProblem() const { return m_figureProblem; }
    // choose what the figures show (for tests and scripts)
    void setAxes(int x, int y);
    void setLayer(int layer);

Q_SIGNALS:
    void runRequested(const nope::ui::SweepRequest& request);
    void stopRequested();
    void openRequested(const QString& folder);

private:
    QWidget* definitionBox();
    QWidget* resultsBox();
    void fillChoices();
    void redraw();
    void fillTable(const std::vector<const study::SummaryRow*>& rows);
    SweepSelection selection() const;

    QLineEdit* m_grid;
    QSpinBox* m_seeds;
    QComboBox* m_mode;
    QCheckBox* m_probes;
    QLineEdit* m_fixed;
    QSpinBox* m_jobs;
    QLineEdit* m_out;
    QPushButton* m_run;
    QPushButton* m_stop;
    QPushButton* m_open;
    QProgressBar* m_progress;
    QLabel* m_status;
    QComboBox* m_stage;
    QComboBox* m_point;
    QComboBox* m_layer;
    QComboBox* m_x;
    QComboBox* m_y;
    QFormLayout* m_heldLayout;
    std::vector<QComboBox*> m_held;  // one per axis, the value it is held at when not plotted
    QStringList m_heldAxes;          // the axes of those boxes
    QTabWidget* m_figures;
    QCustomPlot* m_heatmap;
    QCustomPlot* m_lines;
    QTableWidget* m_table;
    study::SweepResults m_results;
    TableData m_data;
    QString m_figureProblem;
    bool m_filling = false;
};

}  // namespace nope::ui

Q_DECLARE_METATYPE(nope::ui::SweepRequest)
