#include "gui/export_menu.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMenu>

#include "widgets/qcp.h"

namespace nope::gui {

namespace {

constexpr const char* kTableFormats = "CSV (*.csv);;JSON (*.json);;Markdown (*.md)";

}  // namespace

ExportMenu::ExportMenu(QWidget* window, std::function<ui::ExportSet()> source,
                       std::function<void(const QString&, const QString&)> report)
    : QObject(window), m_window(window), m_source(std::move(source)), m_report(std::move(report)) {}

void ExportMenu::addTo(QMenu* file) {
    QMenu* menu = file->addMenu("&Export");
    using Set = ui::ExportSet;
    const struct {
        const char* label;
        QCustomPlot* Set::*plot;
        const char* name;
    } figures[] = {
        {"&Heatmaps...", &Set::heatmaps, "heatmaps"},
        {"&Adjacency curves...", &Set::adjacencyCurves, "adjacency_curves"},
        {"&Training curves...", &Set::trainingCurves, "training_curves"},
        {"&Probe bars...", &Set::probeBars, "probe_bars"},
        {"Probe s&catter...", &Set::probeScatter, "probe_scatter"},
        {"Compared a&djacency curves...", &Set::comparedAdjacency, "compared_adjacency"},
        {"Compared acc&uracy curves...", &Set::comparedAccuracy, "compared_accuracy"},
        {"Side by side: A...", &Set::sideA, "side_a"},
        {"Side by side: B...", &Set::sideB, "side_b"},
        {"Side by side: A - B...", &Set::sideDifference, "side_difference"},
        {"S&weep heatmap...", &Set::sweepHeatmap, "sweep_heatmap"},
        {"Sweep &lines...", &Set::sweepLines, "sweep_lines"},
        {"&Mechanism heatmaps...", &Set::mechanism, "mechanism"},
        {"A&blation heatmaps...", &Set::ablations, "ablation_heatmaps"},
        {"Atte&ntion heatmaps...", &Set::attentionHeatmaps, "attention_heatmaps"},
        {"Attention &entropy curves...", &Set::attentionEntropy, "attention_entropy"},
        {"Attention d&istance curves...", &Set::attentionDistance, "attention_distance"},
        {"Pro&jector panels...", &Set::projector, "projector"},
        {"Projector: axis 1 against &position...", &Set::projectorPosition, "projector_position"},
    };
    for (const auto& f : figures) {
        menu->addAction(f.label, this, [this, f] { exportPlot(f.plot, f.name); });
    }
    menu->addAction("&Score table...", this,
                    [this] { exportTable(&Set::scores, "Export score table", "scores.csv"); });
    menu->addAction("P&robe table...", this,
                    [this] { exportTable(&Set::probes, "Export probe table", "probes.csv"); });
    menu->addAction("Compared sc&ores...", this, [this] {
        exportTable(&Set::comparedScores, "Export compared scores", "compared_scores.csv");
    });
    menu->addAction("Sweep su&mmary...", this, [this] {
        exportTable(&Set::sweepSummary, "Export sweep summary", "sweep_summary.csv");
    });
    menu->addAction("Attention ta&ble...", this, [this] {
        exportTable(&Set::attention, "Export attention table", "attention.csv");
    });
    menu->addAction("Projection table...", this, [this] {
        exportTable(&Set::projection, "Export projection table", "projection.csv");
    });
    menu->addAction("Ablation &table...", this, [this] {
        exportTable(&Set::ablationTable, "Export ablation table", "ablation_table.csv");
    });
    menu->addAction("&Config...", this, &ExportMenu::exportConfig);
    file->addAction("Export &all...", QKeySequence("Ctrl+E"), this,
                    &ExportMenu::exportAllInteractive);
}

QStringList ExportMenu::exportAll(const QString& dir, double scale) {
    return ui::exportAll(m_source(), dir, scale);
}

void ExportMenu::exportPlot(QCustomPlot* ui::ExportSet::*plot, const QString& name) {
    const QString path = QFileDialog::getSaveFileName(m_window, "Export figure", name + ".png",
                                                      "PNG (*.png);;PDF (*.pdf);;SVG (*.svg)");
    if (path.isEmpty()) {
        return;
    }
    double scale = 1.0;
    if (QFileInfo(path).suffix().toLower() == "png") {
        bool ok = false;
        scale = QInputDialog::getDouble(m_window, "PNG scale", "scale", 2.0, 0.5, 8.0, 1, &ok);
        if (!ok) {
            return;
        }
    }
    QCustomPlot* figure = m_source().*plot;
    m_report(figure ? ui::savePlot(figure, path, scale) : QString("nothing to export"),
             "wrote " + path);
}

void ExportMenu::exportTable(ui::TableData ui::ExportSet::*table, const QString& title,
                             const QString& name) {
    const QString path = QFileDialog::getSaveFileName(m_window, title, name, kTableFormats);
    if (!path.isEmpty()) {
        m_report(ui::saveTable(path, m_source().*table), "wrote " + path);
    }
}

void ExportMenu::exportConfig() {
    const QString path =
        QFileDialog::getSaveFileName(m_window, "Export config", "config.json", "JSON (*.json)");
    if (!path.isEmpty()) {
        m_report(ui::saveText(path, m_source().config), "wrote " + path);
    }
}

void ExportMenu::exportAllInteractive() {
    const QString dir =
        QFileDialog::getExistingDirectory(m_window, "Export everything into a folder");
    bool ok = false;
    const double scale =
        dir.isEmpty() ? 0.0
                      : QInputDialog::getDouble(m_window, "PNG scale", "scale of the PNG figures",
                                                2.0, 0.5, 8.0, 1, &ok);
    if (ok) {
        m_report(exportAll(dir, scale).join("\n"), "exported everything to " + dir);
    }
}

}  // namespace nope::gui
