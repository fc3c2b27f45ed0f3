// The run browser: the run folders under a chosen root (task, preset, model, steps, best
// accuracy, date), each with a box to tick for comparison. Reads the folders' small files only
// (run/run_catalog.h); a folder that cannot be read is listed greyed with its error.
#pragma once

#include <QWidget>

#include <filesystem>
#include <vector>

#include "run/run_catalog.h"

class QLabel;
class QLineEdit;
class QTableWidget;

namespace nope::ui {

class RunBrowser : public QWidget {
    Q_OBJECT

public:
    explicit RunBrowser(QWidget* parent = nullptr);

    void setRoot(const QString& root);  // lists the runs under it
    QString root() const;
    void refresh();

    const std::vector<RunSummary>& runs() const { return m_runs; }
    // The ticked runs, in the table's order.
    std::vector<RunSummary> checkedRuns() const;
    void setChecked(int row, bool checked);
    QTableWidget* table() const { return m_table; }

Q_SIGNALS:
    void selectionChanged();

private:
    void fill();

    QLineEdit* m_root;
    QTableWidget* m_table;
    QLabel* m_count;
    std::vector<RunSummary> m_runs;
    bool m_filling = false;
};

}  // namespace nope::ui
