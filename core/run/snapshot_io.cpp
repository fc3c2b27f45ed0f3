#include "run/snapshot_io.h"

#include "run/probe_io.h"
#include "tasks/vocab.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace nope {

namespace {

nlohmann::json rounded(const std::vector<float>& values) {
    nlohmann::json out = nlohmann::json::array();
    for (float v : values) {
        out.push_back(std::isfinite(v) ? nlohmann::json(std::round(double(v) * 1e4) / 1e4)
                                       : nlohmann::json());  // NaN as null
    }
    return out;
}

// Each matrix rounded (the kept prompts').
nlohmann::json roundedEach(const std::vector<std::vector<float>>& matrices) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& m : matrices) {
        out.push_back(rounded(m));
    }
    return out;
}

// A matrix of `cells` values; null (how NaN is written) reads back as NaN.
std::vector<float> floats(const nlohmann::json& j, size_t cells) {
    if (!j.is_array() || j.size() != cells) {
        throw std::invalid_argument("a matrix has " + std::to_string(j.size()) +
                                    " values, expected " + std::to_string(cells));
    }
    std::vector<float> out;
    out.reserve(j.size());
    for (const auto& v : j) {
        out.push_back(v.is_null() ? std::nanf("") : v.get<float>());
    }
    return out;
}

std::vector<std::vector<float>> floatsEach(const nlohmann::json& j, size_t cells) {
    std::vector<std::vector<float>> out;
    for (const auto& m : j) {
        out.push_back(floats(m, cells));
    }
    return out;
}

// NaN is not JSON: written as null, read back as NaN.
nlohmann::json number(double v) {
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
}
double numberFrom(const nlohmann::json& j, const char* key) {
    const auto& v = j.at(key);
    return v.is_null() ? std::nan("") : v.get<double>();
}

}  // namespace

nlohmann::json toJson(const EvalResult& e) {
    nlohmann::json byLength = nlohmann::json::array();
    for (const auto& b : e.byLength) {
        byLength.push_back(
            {{"answer_length", b.answerLength}, {"correct", b.correct}, {"total", b.total}});
    }
    nlohmann::json predictions = nlohmann::json::array();
    for (const auto& p : e.predictions) {
        predictions.push_back({{"prompt", p.prompt},
                               {"expected", p.expected},
                               {"produced", p.produced},
                               {"correct", p.correct}});
    }
    return {{"step", e.step},
            {"test_loss", number(e.testLoss)},
            {"accuracy", e.accuracy},
            {"correct", e.correct},
            {"total", e.total},
            {"by_length", byLength},
            {"predictions", predictions},
            {"seconds", e.seconds}};
}

EvalResult evalFromJson(const nlohmann::json& j) {
    EvalResult e;
    e.step = j.at("step").get<int>();
    e.testLoss = numberFrom(j, "test_loss");
    e.accuracy = j.at("accuracy").get<double>();
    e.correct = j.at("correct").get<int>();
    e.total = j.at("total").get<int>();
    for (const auto& b : j.at("by_length")) {
        e.byLength.push_back({b.at("answer_length").get<int>(), b.at("correct").get<int>(),
                              b.at("total").get<int>()});
    }
    for (const auto& p : j.at("predictions")) {
        e.predictions.push_back({p.at("prompt").get<std::string>(),
                                 p.at("expected").get<std::string>(),
                                 p.at("produced").get<std::string>(), p.at("correct").get<bool>()});
    }
    e.seconds = j.value("seconds", 0.0);
    return e;
}

namespace {

nlohmann::json attentionJson(const AttentionAnalysis& a) {
    nlohmann::json heads = nlohmann::json::array();
    for (const auto& h : a.heads) {
        heads.push_back({{"layer", h.layer},
                         {"head", h.head},
                         {"entropy", h.entropy},
                         {"mean_distance", h.meanDistance},
                         {"mean_matrix", rounded(h.meanMatrix)},
                         {"prompt_matrices", roundedEach(h.promptMatrices)}});
    }
    return {{"samples", a.samples}, {"seq_len", a.seqLen}, {"heads", heads}};
}

AttentionAnalysis attentionFromJson(const nlohmann::json& j, int seqLen, size_t keptPrompts) {
    AttentionAnalysis a;
    a.samples = j.at("samples").get<int>();
    a.seqLen = j.at("seq_len").get<int>();
    if (a.seqLen != seqLen) {
        throw std::invalid_argument("attention seq_len " + std::to_string(a.seqLen) +
                                    " differs from the analysis' " + std::to_string(seqLen));
    }
    const size_t cells = static_cast<size_t>(a.seqLen) * a.seqLen;
    for (const auto& h : j.at("heads")) {
        HeadAttention head;
        head.layer = h.at("layer").get<int>();
        head.head = h.at("head").get<int>();
        head.entropy = h.at("entropy").get<double>();
        head.meanDistance = h.at("mean_distance").get<double>();
        head.meanMatrix = floats(h.at("mean_matrix"), cells);
        head.promptMatrices = floatsEach(h.at("prompt_matrices"), cells);
        if (head.promptMatrices.size() > keptPrompts) {
            throw std::invalid_argument("more attention prompt matrices than kept prompts");
        }
        a.heads.push_back(std::move(head));
    }
    return a;
}

// Projected coordinates to 5 significant digits (their scale follows the hidden states').
nlohmann::json significant(const std::vector<float>& values) {
    nlohmann::json out = nlohmann::json::array();
    for (float v : values) {
        char text[32];
        std::snprintf(text, sizeof text, "%.5g", double(v));
        out.push_back(std::isfinite(v) ? nlohmann::json(std::strtod(text, nullptr))
                                       : nlohmann::json());
    }
    return out;
}

nlohmann::json projectionJson(const ProjectionSet& set) {
    nlohmann::json items = nlohmann::json::array();
    for (const auto& p : set.items) {
        items.push_back({{"point", toString(p.point)},
                         {"layer", p.layer},
                         {"method", toString(p.method)},
                         {"explained", p.explained},
                         {"r_position", number(p.rPosition)},
                         {"coords", significant(p.coords)}});
    }
    return {{"prompts", set.prompts},
            {"seq_len", set.seqLen},
            {"tokens", set.tokens},
            {"items", items}};
}

ProjectionSet projectionFromJson(const nlohmann::json& j, int seqLen) {
    ProjectionSet set;
    set.prompts = j.at("prompts").get<int>();
    set.seqLen = j.at("seq_len").get<int>();
    if (set.seqLen != seqLen || set.prompts < 0 || set.prompts > 10000) {
        throw std::invalid_argument("projection of " + std::to_string(set.prompts) +
                                    " prompts of " + std::to_string(set.seqLen) +
                                    " tokens does not fit the analysis' " + std::to_string(seqLen));
    }
    const size_t tokens = static_cast<size_t>(set.prompts) * set.seqLen;
    set.tokens = j.at("tokens").get<std::vector<int>>();
    if (!set.tokens.empty() && set.tokens.size() != tokens) {
        throw std::invalid_argument("projection tokens: " + std::to_string(set.tokens.size()) +
                                    " values, expected " + std::to_string(tokens));
    }
    for (int id : set.tokens) {
        if (id < 0 || id >= vocab::kSize) {
            throw std::invalid_argument("projection token " + std::to_string(id) +
                                        " is outside the vocabulary (0 to 95)");
        }
    }
    for (const auto& item : j.at("items")) {
        Projection p;
        const auto point = parseCapturePoint(item.at("point").get<std::string>());
        const auto method = parseProjectionMethod(item.at("method").get<std::string>());
        if (!point || !method) {
            throw std::invalid_argument("unknown projection " + item.at("point").dump() + " " +
                                        item.at("method").dump());
        }
        p.point = *point;
        p.method = *method;
        p.layer = item.at("layer").get<int>();
        p.explained = item.at("explained").get<std::array<double, kProjectionAxes>>();
        p.rPosition = numberFrom(item, "r_position");
        p.prompts = set.prompts;
        p.seqLen = set.seqLen;
        p.coords = floats(item.at("coords"), tokens * kProjectionAxes);
        set.items.push_back(std::move(p));
    }
    return set;
}

}  // namespace

nlohmann::json toJson(const Analysis& a) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : a.rows) {
        rows.push_back({{"point", toString(r.point)},
                        {"layer", r.layer},
                        {"adjacency_mean", r.adjacencyMean},
                        {"adjacency_std", r.adjacencyStd},
                        {"norm_score", r.normScore},
                        {"variance_score", r.varianceScore},
                        {"mean_matrix", rounded(r.meanMatrix)},
                        {"prompt_matrices", roundedEach(r.promptMatrices)}});
    }
    nlohmann::json j = {{"samples", a.samples},
                        {"seq_len", a.seqLen},
                        {"kept_prompts", a.keptPrompts},
                        {"rows", rows},
                        {"forward_seconds", a.forwardSeconds},
                        {"scoring_seconds", a.scoringSeconds}};
    if (!a.attention.empty()) {
        j["attention"] = attentionJson(a.attention);
    }
    if (!a.projection.empty()) {
        j["projection"] = projectionJson(a.projection);
    }
    if (a.nonFinite) {
        j["non_finite"] = {{"point", toString(a.nonFinite->point)},
                           {"layer", a.nonFinite->layer},
                           {"nan", a.nonFinite->nan}};
    }
    return j;
}

Analysis analysisFromJson(const nlohmann::json& j) {
    Analysis a;
    a.samples = j.at("samples").get<int>();
    a.seqLen = j.at("seq_len").get<int>();
    if (a.seqLen < 0 || a.seqLen > 4096) {
        throw std::invalid_argument("seq_len " + std::to_string(a.seqLen) + " is out of range");
    }
    a.keptPrompts = j.at("kept_prompts").get<std::vector<std::string>>();
    for (const auto& r : j.at("rows")) {
        LayerScores row;
        const auto point = parseCapturePoint(r.at("point").get<std::string>());
        if (!point) {
            throw std::invalid_argument("unknown capture point " + r.at("point").dump());
        }
        row.point = *point;
        row.layer = r.at("layer").get<int>();
        row.adjacencyMean = r.at("adjacency_mean").get<double>();
        row.adjacencyStd = r.at("adjacency_std").get<double>();
        row.normScore = r.at("norm_score").get<double>();
        row.varianceScore = r.at("variance_score").get<double>();
        const size_t cells = static_cast<size_t>(a.seqLen) * a.seqLen;
        row.meanMatrix = floats(r.at("mean_matrix"), cells);
        row.promptMatrices = floatsEach(r.at("prompt_matrices"), cells);
        if (row.promptMatrices.size() > a.keptPrompts.size()) {
            throw std::invalid_argument("more prompt matrices than kept prompts");
        }
        a.rows.push_back(std::move(row));
    }
    if (j.contains("attention")) {  // absent from runs before the attention was recorded
        a.attention = attentionFromJson(j.at("attention"), a.seqLen, a.keptPrompts.size());
    }
    if (j.contains("non_finite")) {
        const auto& n = j.at("non_finite");
        const auto point = parseCapturePoint(n.at("point").get<std::string>());
        if (!point) {
            throw std::invalid_argument("unknown capture point " + n.at("point").dump());
        }
        a.nonFinite = NonFinite{*point, n.at("layer").get<int>(), n.at("nan").get<bool>()};
    }
    if (j.contains("projection")) {  // absent from runs before the projector
        a.projection = projectionFromJson(j.at("projection"), a.seqLen);
    }
    a.forwardSeconds = j.value("forward_seconds", 0.0);
    a.scoringSeconds = j.value("scoring_seconds", 0.0);
    return a;
}

nlohmann::json toJson(const Snapshot& s) {
    return {{"step", s.step},
            {"total_steps", s.totalSteps},
            {"train_loss", number(s.trainLoss)},
            {"learning_rate", s.learningRate},
            {"tokens_per_s", s.tokensPerSecond},
            {"elapsed_s", s.elapsedSeconds},
            {"eta_s", s.etaSeconds},
            {"limit_step", s.limitStep},
            {"best", s.best},
            {"eval", toJson(s.eval)},
            {"analysis", toJson(s.analysis)},
            {"probes", s.probes.empty() ? nlohmann::json(nullptr)
                                        : probesJson(s.probes, /*withPredictions=*/true)}};
}

Snapshot snapshotFromJson(const nlohmann::json& j) {
    try {
        Snapshot s;
        s.step = j.at("step").get<int>();
        s.totalSteps = j.at("total_steps").get<int>();
        s.trainLoss = numberFrom(j, "train_loss");
        s.learningRate = j.at("learning_rate").get<double>();
        s.tokensPerSecond = j.at("tokens_per_s").get<double>();
        s.elapsedSeconds = j.at("elapsed_s").get<double>();
        s.etaSeconds = j.value("eta_s", 0.0);
        s.limitStep = j.value("limit_step", 0);
        s.best = j.value("best", false);
        s.eval = evalFromJson(j.at("eval"));
        s.analysis = analysisFromJson(j.at("analysis"));
        if (j.contains("probes") && !j.at("probes").is_null()) {
            s.probes = probeReportFromJson(j.at("probes"));
        }
        return s;
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(e.what());
    }
}

}  // namespace nope
