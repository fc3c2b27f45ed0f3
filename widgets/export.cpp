#include "widgets/export.h"

#include <QBuffer>
#include <QDir>
#include <QFileInfo>
#include <QSaveFile>
#include <QSvgGenerator>

#include <filesystem>

#include "widgets/qcp.h"

namespace nope::ui {

namespace {

// Renames tmp over path (atomic on one file system); removes tmp on failure.
QString moveIntoPlace(const QString& tmp, const QString& path) {
    std::error_code ec;
    std::filesystem::rename(tmp.toStdString(), path.toStdString(), ec);
    if (ec) {
        QFile::remove(tmp);
        return QString("cannot write %1: %2").arg(path, QString::fromStdString(ec.message()));
    }
    return {};
}

}  // namespace

bool isPlotFormat(const QString& suffix) {
    const QString s = suffix.toLower();
    return s == "png" || s == "pdf" || s == "svg";
}

QString saveText(const QString& path, const QByteArray& data) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        return QString("cannot write %1: %2").arg(path, file.errorString());
    }
    file.write(data);
    if (!file.commit()) {
        return QString("cannot write %1: %2").arg(path, file.errorString());
    }
    return {};
}

QString savePlot(QCustomPlot* plot, const QString& path, double scale) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    const int width = std::max(plot->width(), 200);
    const int height = std::max(plot->height(), 150);
    const QString tmp = path + ".part." + suffix;
    if (suffix == "png") {
        if (!plot->savePng(tmp, width, height, scale)) {
            QFile::remove(tmp);
            return QString("cannot write %1 (PNG rendering failed)").arg(path);
        }
        return moveIntoPlace(tmp, path);
    }
    if (suffix == "pdf") {
        if (!plot->savePdf(tmp, width, height)) {
            QFile::remove(tmp);
            return QString("cannot write %1 (PDF rendering failed)").arg(path);
        }
        return moveIntoPlace(tmp, path);
    }
    if (suffix == "svg") {
        QBuffer buffer;
        buffer.open(QIODevice::WriteOnly);
        QSvgGenerator generator;
        generator.setOutputDevice(&buffer);
        generator.setSize(QSize(width, height));
        generator.setViewBox(QRect(0, 0, width, height));
        generator.setTitle("NoPEScope");
        QCPPainter painter;
        if (!painter.begin(&generator)) {
            return QString("cannot write %1 (SVG rendering failed)").arg(path);
        }
        plot->toPainter(&painter, width, height);
        painter.end();
        return saveText(path, buffer.data());
    }
    return QString("cannot export %1: unknown format '%2' (allowed: png, pdf, svg)")
        .arg(path, suffix);
}

QString saveTable(const QString& path, const TableData& table) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == "csv") {
        return saveText(path, toCsv(table).toUtf8());
    }
    if (suffix == "json") {
        return saveText(path, toJson(table));
    }
    if (suffix == "md") {
        return saveText(path, toMarkdown(table).toUtf8());
    }
    return QString("cannot export %1: unknown format '%2' (allowed: csv, json, md)")
        .arg(path, suffix);
}

QStringList exportAll(const ExportSet& set, const QString& dir, double scale) {
    if (!QDir().mkpath(dir)) {
        return {QString("cannot create folder %1").arg(dir)};
    }
    const QDir d(dir);
    QStringList problems;
    auto check = [&](const QString& error) {
        if (!error.isEmpty()) {
            problems << error;
        }
    };
    const std::pair<QCustomPlot*, QString> plots[] = {
        {set.heatmaps, "heatmaps"},
        {set.adjacencyCurves, "adjacency_curves"},
        {set.trainingCurves, "training_curves"},
        {set.probeBars, "probe_bars"},
        {set.probeScatter, "probe_scatter"},
        {set.comparedAdjacency, "compared_adjacency"},
        {set.comparedAccuracy, "compared_accuracy"},
        {set.sideA, "side_a"},
        {set.sideB, "side_b"},
        {set.sideDifference, "side_difference"},
        {set.sweepHeatmap, "sweep_heatmap"},
        {set.sweepLines, "sweep_lines"},
        {set.mechanism, "mechanism"},
        {set.ablations, "ablation_heatmaps"},
        {set.attentionHeatmaps, "attention_heatmaps"},
        {set.attentionEntropy, "attention_entropy"},
        {set.attentionDistance, "attention_distance"},
        {set.projector, "projector"},
        {set.projectorPosition, "projector_position"}};
    for (const auto& [plot, name] : plots) {
        for (const char* suffix : {"png", "pdf", "svg"}) {
            if (plot) {
                check(savePlot(plot, d.filePath(name + "." + suffix), scale));
            }
        }
    }
    const std::pair<const TableData*, QString> tables[] = {{&set.probes, "probes"},
                                                           {&set.sweepSummary, "sweep_summary"},
                                                           {&set.comparedScores, "compared_scores"},
                                                           {&set.attention, "attention"},
                                                           {&set.ablationTable, "ablation_table"},
                                                           {&set.projection, "projection"}};
    for (const char* suffix : {"csv", "json", "md"}) {
        check(saveTable(d.filePath(QString("scores.") + suffix), set.scores));
        for (const auto& [table, name] : tables) {
            if (!table->rows.isEmpty()) {
                check(saveTable(d.filePath(name + "." + suffix), *table));
            }
        }
    }
    check(saveText(d.filePath("config.json"), set.config));
    return problems;
}

}  // namespace nope::ui
