// The score table, as in the paper: rows init, current (and best); columns embedding and layer
// 1..L; each cell the adjacency score's mean ± std over the analysed prompts, for one capture
// point (the embedding column always shows the embedding). A stage with position probes gets a
// second row: the Pearson R of the cosine, vector and variance probes of each layer (all five
// features and NRMSE in the cell's tooltip and in the exported table).
#pragma once

#include <QTableWidget>

#include "analysis/analysis.h"
#include "probe/probe_result.h"
#include "widgets/table_data.h"

namespace nope::ui {

struct ScoreRow {
    QString label;                        // "init", "step 750", "best (step 500)"
    const Analysis* analysis;             // may be null: the row is skipped
    const ProbeReport* probes = nullptr;  // when given and not empty, a probe row follows
};

class ScoreTable : public QTableWidget {
    Q_OBJECT

public:
    explicit ScoreTable(QWidget* parent = nullptr);

    void setScores(const std::vector<ScoreRow>& rows, CapturePoint point);
    // The table for export: the means and stds in separate columns.
    TableData tableData() const { return m_data; }

private:
    TableData m_data;
};

}  // namespace nope::ui
