#include "run/probe_io.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "util/files.h"
#include "util/format.h"

namespace nope {

namespace {

// NaN (no control) is written as an empty CSV field and as JSON null.
std::string csvNumber(double value) {
    return std::isfinite(value) ? fixed(value, 6) : "";
}
nlohmann::json jsonNumber(double value) {
    return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}
double numberOf(const nlohmann::json& j, const char* key) {
    const auto& v = j.at(key);
    return v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>();
}

}  // namespace

std::string probesCsvRows(const ProbeReport& report, std::optional<int> step) {
    std::string out;
    for (const auto& r : report.results) {
        if (step) {
            out += std::to_string(*step) + ",";
        }
        out += toString(r.point) + "," + std::to_string(r.layer) + "," + toString(r.feature) + "," +
               probeTarget(r.feature) + "," + csvNumber(r.pearsonR) + "," + csvNumber(r.nrmse) +
               "," + csvNumber(r.controlR) + "," + csvNumber(r.controlNrmse) + "," +
               std::to_string(report.trainStrings) + "," + std::to_string(report.testStrings) +
               "\n";
    }
    return out;
}

std::string probesCsv(const ProbeReport& report) {
    return std::string(kProbesCsvHeader) + "\n" + probesCsvRows(report);
}

nlohmann::json probesJson(const ProbeReport& report, bool withPredictions) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : report.results) {
        nlohmann::json row = {
            {"point", toString(r.point)},           {"layer", r.layer},
            {"feature", toString(r.feature)},       {"target", probeTarget(r.feature)},
            {"pearson_r", jsonNumber(r.pearsonR)},  {"nrmse", jsonNumber(r.nrmse)},
            {"control_r", jsonNumber(r.controlR)},  {"control_nrmse", jsonNumber(r.controlNrmse)},
            {"train_loss", jsonNumber(r.trainLoss)}};
        if (withPredictions) {
            row["truth"] = r.truth;
            row["predicted"] = r.predicted;
        }
        rows.push_back(std::move(row));
    }
    return {{"probe", report.config},
            {"sequence_length", report.sequenceLength},
            {"train_strings", report.trainStrings},
            {"test_strings", report.testStrings},
            {"seconds", report.seconds},
            {"cancelled", report.cancelled},
            {"rows", rows}};
}

ProbeReport probeReportFromJson(const nlohmann::json& json) {
    ProbeReport report;
    try {
        if (json.contains("probe")) {
            from_json(json.at("probe"), report.config);
        }
        report.sequenceLength = json.value("sequence_length", 0);
        report.trainStrings = json.value("train_strings", 0);
        report.testStrings = json.value("test_strings", 0);
        report.seconds = json.value("seconds", 0.0);
        report.cancelled = json.value("cancelled", false);
        for (const auto& row : json.at("rows")) {
            ProbeResult r;
            const auto point = parseCapturePoint(row.at("point").get<std::string>());
            const auto feature = parseProbeFeature(row.at("feature").get<std::string>());
            if (!point || !feature) {
                throw std::invalid_argument("unknown point or feature in a probe row");
            }
            r.point = *point;
            r.feature = *feature;
            r.layer = row.at("layer").get<int>();
            r.pearsonR = numberOf(row, "pearson_r");
            r.nrmse = numberOf(row, "nrmse");
            r.controlR = numberOf(row, "control_r");
            r.controlNrmse = numberOf(row, "control_nrmse");
            r.trainLoss = row.contains("train_loss") ? numberOf(row, "train_loss") : 0.0;
            r.truth = row.value("truth", std::vector<float>{});
            r.predicted = row.value("predicted", std::vector<float>{});
            report.results.push_back(std::move(r));
        }
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(std::string("probe results: ") + e.what());
    }
    return report;
}

std::string predictionsCsv(const ProbeReport& report) {
    std::string out = std::string(kPredictionsCsvHeader) + "\n";
    for (const auto& r : report.results) {
        const std::string prefix =
            toString(r.point) + "," + std::to_string(r.layer) + "," + toString(r.feature) + ",";
        for (size_t i = 0; i < r.truth.size() && i < r.predicted.size(); ++i) {
            out += prefix + shortest(r.truth[i]) + "," + shortest(r.predicted[i]) + "\n";
        }
    }
    return out;
}

void writeProbeFolder(const std::filesystem::path& dir, const ProbeReport& report,
                      const nlohmann::json& meta) {
    nlohmann::json json = meta;
    json.update(probesJson(report));
    writeFileAtomic(dir / "probes.csv", probesCsv(report));
    writeFileAtomic(dir / "probes.json", json.dump(2) + "\n");
    writeFileAtomic(dir / "predictions.csv", predictionsCsv(report));
}

}  // namespace nope
