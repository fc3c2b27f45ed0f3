// Saving figures and text from the window. Every write goes to a temporary file first and is
// renamed into place, so a failed export never leaves a half-written file. Each function returns
// an empty string on success, else a message naming the file and the cause.
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

#include "widgets/table_data.h"

class QCustomPlot;

namespace nope::ui {

// By suffix: .png (at `scale` times the plot's size on screen), .pdf or .svg (vector).
QString savePlot(QCustomPlot* plot, const QString& path, double scale = 1.0);
QString saveText(const QString& path, const QByteArray& data);

// The suffixes savePlot understands.
bool isPlotFormat(const QString& suffix);

// A table in the format its suffix names: .csv, .json or .md.
QString saveTable(const QString& path, const TableData& table);

// Everything the window shows, for "Export all".
struct ExportSet {
    QCustomPlot* heatmaps = nullptr;
    QCustomPlot* adjacencyCurves = nullptr;
    QCustomPlot* trainingCurves = nullptr;
    QCustomPlot* probeBars = nullptr;     // skipped when null
    QCustomPlot* probeScatter = nullptr;  // skipped when null
    // The Compare tab's figures, skipped when null (no runs ticked)
    QCustomPlot* comparedAdjacency = nullptr;
    QCustomPlot* comparedAccuracy = nullptr;
    QCustomPlot* sideA = nullptr;
    QCustomPlot* sideB = nullptr;
    QCustomPlot* sideDifference = nullptr;
    QCustomPlot* sweepHeatmap = nullptr;  // the Sweep tab's figures, skipped when null
    QCustomPlot* sweepLines = nullptr;
    QCustomPlot* mechanism = nullptr;  // the Mechanism tab's heatmaps, skipped when null
    QCustomPlot* ablations = nullptr;  // the Mechanism tab's ablation heatmaps, when null skipped
    // The Attention tab's figures, skipped when null (no attention recorded)
    QCustomPlot* attentionHeatmaps = nullptr;
    QCustomPlot* attentionEntropy = nullptr;
    QCustomPlot* attentionDistance = nullptr;
    // The Projector tab's figures, skipped when null (no projections in the shown snapshot)
    QCustomPlot* projector = nullptr;
    QCustomPlot* projectorPosition = nullptr;
    TableData scores;
    TableData probes;          // skipped when it has no rows
    TableData comparedScores;  // skipped when it has no rows
    TableData sweepSummary;    // skipped when it has no rows
    TableData attention;       // the shown layer's heads; skipped when it has no rows
    TableData ablationTable;   // the Mechanism tab's ablations; skipped when it has no rows
    TableData projection;      // the Projector's shown layers; skipped when it has no rows
    QByteArray config;         // the settings of the model shown, as JSON
    // What the window shows (its model or run and step) as JSON, written into export.json with
    // the list of files this export wrote; and the same as one line, drawn above the figures of
    // the model shown (not those of Compare, Sweep and Mechanism, which name their own runs).
    QByteArray subject;
    QString caption;
};

// Writes heatmaps, adjacency_curves, training_curves, probe_bars and probe_scatter (and the
// Compare tab's compared_adjacency, compared_accuracy, side_a, side_b, side_difference and the
// Sweep tab's sweep_heatmap, sweep_lines, the Mechanism tab's mechanism and ablation_heatmaps, the
// Attention tab's attention_heatmaps, attention_entropy and attention_distance, the Projector's
// projector and projector_position when set) as .png (at `scale`), .pdf and .svg, scores (and
// probes, compared_scores, sweep_summary, attention, ablation_table and projection when they have
// rows) as .csv, .json and .md, config.json and export.json (the subject and the files written)
// into `dir`. The files an earlier export into `dir` wrote (its export.json lists them) and this
// one did not are removed, so that the folder holds one subject; no other file is touched.
// Returns the problems, if any.
QStringList exportAll(const ExportSet& set, const QString& dir, double scale);

// Every file name Export all can write.
QStringList exportFileNames();

}  // namespace nope::ui
