// Two (run, step) pairs side by side, as the paper's Figure 1 puts a model at init beside the
// trained one: a row of heatmaps per pair (the embedding and every layer of a capture point) and
// a third row with their difference A - B. Reads the two snapshots from their run folders; a pair
// whose prompts differ in length gets no difference, with the reason.
#pragma once

#include <QWidget>

#include <map>
#include <memory>
#include <vector>

#include "run/run_catalog.h"

class QComboBox;
class QLabel;

namespace nope::ui {

class HeatmapGrid;

class SideBySide : public QWidget {
    Q_OBJECT

public:
    explicit SideBySide(QWidget* parent = nullptr);

    // The runs to choose from. By default A is the first run's first snapshot and B its last.
    void setRuns(std::vector<RunSummary> runs);
    // Picks a pair: `side` 0 for A, 1 for B; the step must be one of the run's snapshots.
    void choose(int side, int run, int step);

    HeatmapGrid* grid(int side) const { return m_grids[side]; }  // 0 A, 1 B, 2 A - B
    QString message() const;  // why something is missing, empty when all is shown

private:
    void fillSteps(int side);
    void redraw();
    // The snapshot a row shows, null when none; shared, so that a cache eviction while the other
    // row is read cannot free it.
    std::shared_ptr<const Snapshot> snapshot(int side);

    QComboBox* m_run[2];
    QComboBox* m_step[2];
    QComboBox* m_point;
    QLabel* m_message;
    HeatmapGrid* m_grids[3];
    std::vector<RunSummary> m_runs;
    std::map<std::pair<std::string, int>, std::shared_ptr<const Snapshot>> m_cache;  // folder, step
};

}  // namespace nope::ui
