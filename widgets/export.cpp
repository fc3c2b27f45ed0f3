#include "widgets/export.h"

#include <QBuffer>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
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

namespace {

struct PlotEntry {
    QCustomPlot* ExportSet::*plot;
    const char* name;
    bool ofSubject;  // a figure of the model shown: captioned with it
};

constexpr PlotEntry kPlots[] = {
    {&ExportSet::heatmaps, "heatmaps", true},
    {&ExportSet::adjacencyCurves, "adjacency_curves", true},
    {&ExportSet::trainingCurves, "training_curves", true},
    {&ExportSet::probeBars, "probe_bars", true},
    {&ExportSet::probeScatter, "probe_scatter", true},
    {&ExportSet::comparedAdjacency, "compared_adjacency", false},
    {&ExportSet::comparedAccuracy, "compared_accuracy", false},
    {&ExportSet::sideA, "side_a", false},
    {&ExportSet::sideB, "side_b", false},
    {&ExportSet::sideDifference, "side_difference", false},
    {&ExportSet::sweepHeatmap, "sweep_heatmap", false},
    {&ExportSet::sweepLines, "sweep_lines", false},
    {&ExportSet::mechanism, "mechanism", false},
    {&ExportSet::ablations, "ablation_heatmaps", false},
    {&ExportSet::attentionHeatmaps, "attention_heatmaps", true},
    {&ExportSet::attentionEntropy, "attention_entropy", true},
    {&ExportSet::attentionDistance, "attention_distance", true},
    {&ExportSet::projector, "projector", true},
    {&ExportSet::projectorPosition, "projector_position", true},
};

struct TableEntry {
    TableData ExportSet::*table;
    const char* name;
    bool always;  // written even without rows
};

constexpr TableEntry kTables[] = {
    {&ExportSet::scores, "scores", true},
    {&ExportSet::probes, "probes", false},
    {&ExportSet::sweepSummary, "sweep_summary", false},
    {&ExportSet::comparedScores, "compared_scores", false},
    {&ExportSet::attention, "attention", false},
    {&ExportSet::ablationTable, "ablation_table", false},
    {&ExportSet::projection, "projection", false},
};

constexpr const char* kPlotSuffixes[] = {"png", "pdf", "svg"};
constexpr const char* kTableSuffixes[] = {"csv", "json", "md"};
constexpr const char* kConfigFile = "config.json";
constexpr const char* kManifestFile = "export.json";

// The caption broken at its " · " separators into lines no wider than `width` (a narrow
// figure's caption would otherwise be cut at both ends).
QString fitCaption(const QString& caption, const QFont& font, int width) {
    const QFontMetrics metrics(font);
    const QString separator = QStringLiteral(" · ");
    QStringList lines;
    for (const QString& part : caption.split(separator)) {
        if (!lines.isEmpty() &&
            metrics.horizontalAdvance(lines.back() + separator + part) <= width) {
            lines.back() += separator + part;
        } else {
            lines << part;
        }
    }
    return lines.join('\n');
}

// Runs `save` with `caption` drawn in a row above the plot's layout, then takes the row away.
template <typename Save>
QString withCaption(QCustomPlot* plot, const QString& caption, Save save) {
    if (caption.isEmpty()) {
        return save();
    }
    QCPLayoutGrid* layout = plot->plotLayout();
    layout->insertRow(0);
    const QFont font("sans", 9);
    auto* text = new QCPTextElement(plot, fitCaption(caption, font, plot->width() - 8), font);
    text->setTextColor(plot->palette().color(QPalette::Text));
    layout->addElement(0, 0, text);
    layout->setRowStretchFactor(0, 0.001);
    const QString problem = save();
    layout->remove(text);
    layout->simplify();
    plot->replot(QCustomPlot::rpQueuedReplot);
    return problem;
}

}  // namespace

QStringList exportFileNames() {
    QStringList names;
    for (const PlotEntry& p : kPlots) {
        for (const char* suffix : kPlotSuffixes) {
            names << QString("%1.%2").arg(p.name, suffix);
        }
    }
    for (const TableEntry& t : kTables) {
        for (const char* suffix : kTableSuffixes) {
            names << QString("%1.%2").arg(t.name, suffix);
        }
    }
    names << kConfigFile << kManifestFile;
    return names;
}

// Longer than 60 lines for a reason: the figures, the tables, the config, the manifest and the
// removal of what an earlier export left are one pass whose order matters (the manifest last).
QStringList exportAll(const ExportSet& set, const QString& dir, double scale) {
    if (!QDir().mkpath(dir)) {
        return {QString("cannot create folder %1").arg(dir)};
    }
    const QDir d(dir);
    QStringList problems, written;
    QStringList previous;  // the files an earlier export into this folder wrote
    if (QFile manifest(d.filePath(kManifestFile)); manifest.open(QIODevice::ReadOnly)) {
        for (const QJsonValue& name :
             QJsonDocument::fromJson(manifest.readAll()).object()["files"].toArray()) {
            previous << name.toString();
        }
    }
    auto write = [&](const QString& name, const QString& error) {
        if (error.isEmpty()) {
            written << name;
        } else {
            problems << error;
        }
    };
    for (const PlotEntry& p : kPlots) {
        QCustomPlot* plot = set.*(p.plot);
        if (!plot) {
            continue;
        }
        for (const char* suffix : kPlotSuffixes) {
            const QString name = QString("%1.%2").arg(p.name, suffix);
            write(name, withCaption(plot, p.ofSubject ? set.caption : QString(),
                                    [&] { return savePlot(plot, d.filePath(name), scale); }));
        }
    }
    for (const TableEntry& t : kTables) {
        const TableData& table = set.*(t.table);
        if (!t.always && table.rows.isEmpty()) {
            continue;
        }
        for (const char* suffix : kTableSuffixes) {
            const QString name = QString("%1.%2").arg(t.name, suffix);
            write(name, saveTable(d.filePath(name), table));
        }
    }
    write(kConfigFile, saveText(d.filePath(kConfigFile), set.config));
    // what an earlier export (of another subject) wrote and this one did not goes: the files its
    // export.json lists, and no other (a run folder's own probes.csv stays)
    for (const QString& name : previous) {
        if (!written.contains(name) && name != kManifestFile && exportFileNames().contains(name) &&
            d.exists(name) && !QFile::remove(d.filePath(name))) {
            problems
                << QString("cannot remove %1, left by an earlier export").arg(d.filePath(name));
        }
    }
    QJsonObject manifest;
    manifest["subject"] = QJsonDocument::fromJson(set.subject).object();
    manifest["files"] = QJsonArray::fromStringList(written);
    write(kManifestFile, saveText(d.filePath(kManifestFile),
                                  QJsonDocument(manifest).toJson(QJsonDocument::Indented)));
    return problems;
}

}  // namespace nope::ui
