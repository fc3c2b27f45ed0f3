#include "cli/report_tables.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace nope::cli {

namespace {

std::string number(double v, int decimals = 3) {
    if (!std::isfinite(v)) {
        return "-";
    }
    char text[32];
    std::snprintf(text, sizeof text, "%.*f", decimals, v);
    return text;
}

std::string row(const std::vector<std::string>& cells) {
    std::string out = "|";
    for (const auto& c : cells) {
        out += " " + c + " |";
    }
    return out + "\n";
}

std::string header(const std::vector<std::string>& cells) {
    std::string out = row(cells) + "|";
    for (size_t i = 0; i < cells.size(); ++i) {
        out += " --- |";
    }
    return out + "\n";
}

int layersOf(const study::SweepResults& r, const std::map<std::string, std::string>& values) {
    int most = 0;
    for (int layer = 1; layer <= 64; ++layer) {
        if (findRow(r, values, "init", "attn", layer)) {
            most = layer;
        }
    }
    return most;
}

std::vector<std::string> layerHeader(const std::string& first, const std::string& second,
                                     int layers) {
    std::vector<std::string> h = {first, second, "embedding"};
    for (int l = 1; l <= layers; ++l) {
        h.push_back("layer " + std::to_string(l));
    }
    return h;
}

const study::OptionalMean* meanOf(const std::map<std::string, study::OptionalMean>* means,
                                  const std::string& feature) {
    if (!means) {
        return nullptr;
    }
    const auto it = means->find(feature);
    return it != means->end() && it->second.n > 0 ? &it->second : nullptr;
}

const std::map<std::string, std::string> kNope = {{"attention", "causal"}, {"positional", "none"}};

}  // namespace

const study::SummaryRow* findRow(const study::SweepResults& results,
                                 const std::map<std::string, std::string>& values,
                                 const std::string& stage, const std::string& point, int layer) {
    for (const auto& r : results.summary) {
        if (r.stage != stage || r.layer != layer ||
            r.point != (layer == 0 ? std::string("embedding") : point)) {
            continue;
        }
        bool match = true;
        for (size_t a = 0; a < results.axes.size() && match; ++a) {
            const auto it = values.find(results.axes[a]);
            match = it == values.end() || it->second == r.values[a];
        }
        if (match) {
            return &r;
        }
    }
    return nullptr;
}

std::string scoreCell(const study::SummaryRow* r) {
    if (!r) {
        return "-";
    }
    return number(r->adjacency.mean) + " ± " + number(r->adjacency.sd);
}

std::string layerTable(const std::map<std::string, study::SweepResults>& init,
                       const std::map<std::string, study::SweepResults>& trained,
                       const std::string& initModel, const std::string& trainedModel) {
    int layers = 0;
    for (const auto& [task, r] : init) {
        layers = std::max(layers, layersOf(r, kNope));
    }
    std::vector<std::string> h = layerHeader("task", "model", layers);
    h.insert(h.begin() + 2, "stage");
    std::string out = header(h);
    auto add = [&](const std::string& task, const std::string& model, const std::string& stage,
                   const study::SweepResults& r, const std::map<std::string, std::string>& v,
                   const std::string& stageKey) {
        std::vector<std::string> cells = {task, model, stage};
        for (int l = 0; l <= layers; ++l) {
            cells.push_back(scoreCell(findRow(r, v, stageKey, "attn", l)));
        }
        out += row(cells);
    };
    for (const auto& [task, r] : init) {
        add(task, initModel, "init", r, kNope, "init");
        const auto t = trained.find(task);
        if (t != trained.end()) {
            add(task, trainedModel, "init", t->second, {}, "init");
            add(task, trainedModel, "trained (best checkpoint)", t->second, {}, "trained");
        }
    }
    return out;
}

std::string controlsTable(const std::map<std::string, study::SweepResults>& init) {
    std::string out =
        header({"task", "attention", "positional", "layer 1", "last layer", "mean over layers"});
    for (const auto& [task, r] : init) {
        for (const char* attention : {"causal", "bidirectional"}) {
            for (const char* positional : {"none", "learned"}) {
                const std::map<std::string, std::string> v = {{"attention", attention},
                                                              {"positional", positional}};
                const int layers = layersOf(r, v);
                double sum = 0.0;
                for (int l = 1; l <= layers; ++l) {
                    const auto* s = findRow(r, v, "init", "attn", l);
                    sum += s ? s->adjacency.mean : std::nan("");
                }
                out +=
                    row({task, attention, positional, scoreCell(findRow(r, v, "init", "attn", 1)),
                         scoreCell(findRow(r, v, "init", "attn", layers)),
                         number(layers > 0 ? sum / layers : std::nan(""))});
            }
        }
    }
    return out;
}

std::string sizeTable(const study::SweepResults& sizes) {
    std::string out =
        header({"layers", "width", "layer 1", "middle layer", "last layer", "mean over layers"});
    for (const auto& layersValue : study::axisValues(sizes, "layers")) {
        for (const auto& width : study::axisValues(sizes, "dim")) {
            const std::map<std::string, std::string> v = {{"layers", layersValue}, {"dim", width}};
            const int layers = layersOf(sizes, v);
            if (layers == 0) {
                continue;
            }
            double sum = 0.0;
            for (int l = 1; l <= layers; ++l) {
                const auto* r = findRow(sizes, v, "init", "attn", l);
                sum += r ? r->adjacency.mean : std::nan("");
            }
            out +=
                row({layersValue, width, scoreCell(findRow(sizes, v, "init", "attn", 1)),
                     scoreCell(findRow(sizes, v, "init", "attn", (layers + 1) / 2)),
                     scoreCell(findRow(sizes, v, "init", "attn", layers)), number(sum / layers)});
        }
    }
    return out;
}

std::string initTable(const study::SweepResults& init) {
    const int layers = layersOf(init, {});
    std::string out = header(layerHeader("init mean", "init std", layers));
    for (const auto& mean : study::axisValues(init, "init-mean")) {
        for (const auto& sd : study::axisValues(init, "init-std")) {
            const std::map<std::string, std::string> v = {{"init-mean", mean}, {"init-std", sd}};
            std::vector<std::string> cells = {mean, sd};
            for (int l = 0; l <= layers; ++l) {
                cells.push_back(scoreCell(findRow(init, v, "init", "attn", l)));
            }
            out += row(cells);
        }
    }
    return out;
}

std::string probeTable(const study::SweepResults& probes) {
    const int layers = layersOf(probes, {});
    std::vector<std::string> h = {"attention", "feature"};
    for (int l = 1; l <= layers; ++l) {
        h.push_back("layer " + std::to_string(l));
    }
    std::string out = header(h);
    for (const char* attention : {"causal", "bidirectional"}) {
        for (const char* feature : {"vector", "variance", "cosine"}) {
            std::vector<std::string> cells = {attention, feature};
            for (int l = 1; l <= layers; ++l) {
                const auto* r = findRow(probes, {{"attention", attention}}, "init", "attn", l);
                const study::OptionalMean* pearson = meanOf(r ? &r->probeR : nullptr, feature);
                const study::OptionalMean* nrmse = meanOf(r ? &r->probeNrmse : nullptr, feature);
                cells.push_back(pearson && nrmse ? "R " + number(pearson->mean, 2) + ", NRMSE " +
                                                       number(nrmse->mean, 2)
                                                 : "-");
            }
            out += row(cells);
        }
    }
    return out;
}

}  // namespace nope::cli
