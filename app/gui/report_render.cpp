#include "gui/report_render.h"

#include <QCoreApplication>
#include <QDir>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "run/run_catalog.h"
#include "study/results.h"
#include "util/csv_table.h"
#include "util/error_text.h"
#include "util/files.h"
#include "widgets/export.h"
#include "widgets/heatmap_grid.h"
#include "widgets/plot_style.h"
#include "widgets/qcp.h"
#include "widgets/sweep_plots.h"

namespace nope::gui {

namespace fs = std::filesystem;

namespace {

struct Part {
    std::string name, kind, task;
};

bool save(QCustomPlot* plot, const QDir& figures, const QString& name) {
    bool ok = true;
    for (const char* suffix : {"png", "svg"}) {
        const QString error =
            ui::savePlot(plot, figures.filePath(name + "." + suffix), suffix[0] == 'p' ? 2.0 : 1.0);
        if (!error.isEmpty()) {
            std::fprintf(stderr, "nopescope --report: %s\n", qPrintable(error));
            ok = false;
        }
    }
    return ok;
}

study::SweepResults resultsOf(const fs::path& folder) {
    std::vector<std::string> problems;
    return study::collectResults(folder, study::readManifest(folder), problems);
}

// A run of an init part that is the object of study: causal attention, no positional encoding.
bool isNope(const study::SweepResults& r, const std::vector<std::string>& values) {
    return study::valueOf(r, values, "attention") == "causal" &&
           study::valueOf(r, values, "positional") == "none";
}

size_t axisIndex(const study::SweepResults& r, const std::string& name) {
    for (size_t a = 0; a < r.axes.size(); ++a) {
        if (r.axes[a] == name) {
            return a;
        }
    }
    return 0;
}

bool heatmapFigure(const fs::path& folder, const std::string& x, const std::string& y,
                   const QDir& figures, const QString& name) {
    const study::SweepResults r = resultsOf(folder);
    QCustomPlot plot;
    plot.resize(640, 480);
    ui::applyPlotTheme(&plot, plot.palette());
    ui::SweepSelection selection;
    selection.layer = 1;
    ui::drawScoreHeatmap(&plot, r, axisIndex(r, x), axisIndex(r, y), selection);
    plot.plotLayout()->insertRow(0);
    plot.plotLayout()->addElement(
        0, 0, new QCPTextElement(&plot, "adjacency score of layer 1 (mean ± 95% interval)"));
    return save(&plot, figures, name);
}

// Layer-wise score of each task: init from its init part (NoPE, causal), trained from its
// trained part; error bars the standard deviation over seeds.
bool layersFigure(const fs::path& dir, const std::vector<Part>& parts, const QDir& figures) {
    QCustomPlot plot;
    plot.resize(760, 480);
    ui::applyPlotTheme(&plot, plot.palette());
    int tasks = 0, most = 0;
    for (const auto& p : parts) {
        tasks += p.kind == "tasks" ? 1 : 0;
    }
    int t = 0;
    std::map<std::string, QColor> colors;
    for (const auto& p : parts) {
        if (p.kind != "tasks" && p.kind != "trained") {
            continue;
        }
        if (!colors.count(p.task)) {
            colors[p.task] = ui::layerColor(++t, tasks, false);
        }
        const study::SweepResults r = resultsOf(dir / p.name);
        const std::string stage = p.kind == "tasks" ? "init" : "trained";
        QVector<double> keys, values, errors;
        for (const auto& row : r.summary) {
            const bool nope = p.kind == "trained" || isNope(r, row.values);
            if (row.stage == stage && nope && (row.point == "attn" || row.layer == 0)) {
                keys << row.layer;
                values << row.adjacency.mean;
                errors << row.adjacency.sd;
                most = std::max(most, row.layer);
            }
        }
        QCPGraph* graph = plot.addGraph();
        graph->setData(keys, values);
        graph->setName(QString::fromStdString(p.task + " " + stage));
        graph->setPen(QPen(colors[p.task], 2, stage == "init" ? Qt::SolidLine : Qt::DashLine));
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
        auto* bars = new QCPErrorBars(plot.xAxis, plot.yAxis);
        bars->removeFromLegend();
        bars->setDataPlottable(graph);
        bars->setData(errors);
        bars->setPen(QPen(colors[p.task], 1));
    }
    plot.xAxis->setLabel("layer (0: embedding; then each attention output)");
    plot.yAxis->setLabel("adjacency score (mean ± sd over seeds)");
    plot.xAxis->setRange(-0.3, most + 0.3);
    QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
    ticker->setTickStep(1.0);
    plot.xAxis->setTicker(ticker);
    plot.yAxis->setRange(0.0, 1.02);
    plot.legend->setVisible(true);
    plot.axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignLeft | Qt::AlignBottom);
    return save(&plot, figures, "layers_by_task");
}

// "init layer 1: 0.947"
QString mapTitle(const QString& stage, int layer, double score) {
    return QString("%1 %2: %3")
        .arg(stage, layer == 0 ? QString("embedding") : QString("layer %1").arg(layer))
        .arg(score, 0, 'f', 3);
}

std::vector<float> readMatrix(const fs::path& file, int& size) {
    std::istringstream in(readFile(file));
    std::vector<float> values;
    std::string line, cell;
    size = 0;
    while (std::getline(in, line)) {
        std::istringstream cells(line);
        while (std::getline(cells, cell, ',')) {
            values.push_back(std::stof(cell));
        }
        ++size;
    }
    return values;
}

// The heatmaps of one analysis folder (analyze --out): the embedding and attn layers.
std::vector<ui::Heatmap> analysisMaps(const fs::path& analysis, const QString& stage) {
    std::vector<ui::Heatmap> maps;
    const CsvTable scores(analysis / "scores.csv");
    const size_t point = scores.column("point"), layer = scores.column("layer");
    const size_t mean = scores.column("adjacency_mean");
    for (size_t i = 0; i < scores.rows(); ++i) {
        const std::string p = scores.text(i, point);
        if (p != "embedding" && p != "attn") {
            continue;
        }
        const int l = scores.integer(i, layer);
        ui::Heatmap h;
        h.values =
            readMatrix(analysis / "matrices" / (p + "_layer" + std::to_string(l) + ".csv"), h.size);
        h.title = mapTitle(stage, l, scores.number(i, mean));
        maps.push_back(std::move(h));
    }
    return maps;
}

std::vector<ui::Heatmap> snapshotMaps(const Snapshot& s, const QString& stage) {
    std::vector<ui::Heatmap> maps;
    for (const auto& row : s.analysis.rows) {
        if ((row.point == CapturePoint::Embedding || row.point == CapturePoint::Attn) &&
            !row.meanMatrix.empty()) {
            maps.push_back({mapTitle(stage, row.layer, row.adjacencyMean),
                            s.analysis.seqLen,
                            row.meanMatrix,
                            {}});
        }
    }
    return maps;
}

// The first finished run of a trained part (the first seed): its init snapshot, and the latest
// snapshot that set a best.
bool trainedMaps(const fs::path& part, std::vector<ui::Heatmap>& maps) {
    if (!study::holdsSweep(part)) {
        return false;
    }
    for (const auto& run : study::readManifest(part).runs) {
        const fs::path folder = study::runFolder(part, run);
        const std::vector<int> steps = snapshotSteps(folder);
        if (run.status != study::RunStatus::Done || steps.size() < 2) {
            continue;
        }
        Snapshot best = readSnapshot(folder, steps.back());
        for (int step : steps) {
            Snapshot s = readSnapshot(folder, step);
            if (s.best) {
                best = std::move(s);
            }
        }
        maps = snapshotMaps(readSnapshot(folder, steps.front()), "init");
        const auto trained = snapshotMaps(best, "trained");
        maps.insert(maps.end(), trained.begin(), trained.end());
        return true;
    }
    return false;
}

bool figureOne(const fs::path& dir, const std::string& task, const QDir& figures) {
    std::vector<ui::Heatmap> maps;
    if (!trainedMaps(dir / ("trained-" + task), maps)) {
        // at init only: the first NoPE causal run of the task's init part
        const fs::path init = dir / ("init-" + task);
        const study::SweepResults results = resultsOf(init);
        for (const auto& run : study::readManifest(init).runs) {
            std::vector<std::string> values;
            for (const auto& setting : run.settings) {
                values.push_back(setting.second);
            }
            if (isNope(results, values) && run.status == study::RunStatus::Done) {
                maps = analysisMaps(study::runFolder(init, run) / "analysis", "init");
                break;
            }
        }
    }
    if (maps.empty()) {
        return true;  // nothing to draw: the report leaves the figure out
    }
    ui::HeatmapGrid grid;
    const bool twoRows = maps.size() % 2 == 0 && maps.back().title.startsWith("trained");
    grid.setColumns(static_cast<int>(twoRows ? maps.size() / 2 : maps.size()));
    const int columns = static_cast<int>(twoRows ? maps.size() / 2 : maps.size());
    grid.resize(260 * columns + 120, twoRows ? 600 : 320);
    grid.setHeatmaps(std::move(maps));
    grid.setAttribute(Qt::WA_DontShowOnScreen);  // laid out at its size, never on a screen
    grid.show();
    QCoreApplication::processEvents();
    return save(grid.plot(), figures, QString::fromStdString("figure1_" + task));
}

}  // namespace

bool renderReport(const QString& folder) {
    const fs::path dir = folder.toStdString();
    std::vector<Part> parts;
    try {
        const auto index = nlohmann::json::parse(readFile(dir / "report.json"));
        for (const auto& p : index.at("parts")) {
            parts.push_back({p.at("name"), p.at("kind"), p.at("task")});
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "nopescope --report: %s holds no study (report.json): %s\n",
                     qPrintable(folder), nope::errorText(e).c_str());
        return false;
    }
    QDir figures(folder);
    figures.mkpath("figures");
    figures.cd("figures");
    bool ok = true;
    try {
        ok = layersFigure(dir, parts, figures) && ok;
        std::set<std::string> tasks;
        for (const auto& p : parts) {
            if (p.kind == "sizes") {
                ok = heatmapFigure(dir / p.name, "dim", "layers", figures, "sizes_layer1") && ok;
            } else if (p.kind == "init") {
                ok = heatmapFigure(dir / p.name, "init-std", "init-mean", figures,
                                   "init_scheme_layer1") &&
                     ok;
            } else if (p.kind == "tasks") {
                tasks.insert(p.task);
            }
        }
        for (const auto& task : tasks) {
            ok = figureOne(dir, task, figures) && ok;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "nopescope --report: %s\n", nope::errorText(e).c_str());
        return false;
    }
    std::printf("wrote the figures into %s\n", qPrintable(figures.path()));
    return ok;
}

}  // namespace nope::gui
