#include "config_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>

#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

#include "training/presets.h"

namespace nope::ui {

namespace {

QStringList names(const std::vector<std::string>& items) {
    QStringList out;
    for (const auto& s : items) {
        out << QString::fromStdString(s);
    }
    return out;
}

QString text(double v) {
    return QString::number(v, 'g', 10);
}

}  // namespace

ConfigForm::ConfigForm(QWidget* parent) : QWidget(parent) {
    auto* outer = new QVBoxLayout(this);
    auto group = [&](const QString& title) {
        auto* box = new QGroupBox(title, this);
        auto* form = new QFormLayout(box);
        form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
        outer->addWidget(box);
        return form;
    };

    QFormLayout* run = group("Task");
    QStringList tasks;
    for (TaskKind t : allTasks()) {
        tasks << QString::fromStdString(taskName(t));
    }
    m_task = addCombo(run, "task", tasks, "the synthetic task to learn");
    m_preset = addCombo(run, "preset", names(presetNames()) << "custom",
                        "quick: minutes on a CPU; paper: the authors' setup; custom: your edits");

    QFormLayout* model = group("Model");
    addField(model, "layers", "layers", Field::Int, "transformer blocks (1 to 48)");
    addField(model, "dim", "width", Field::Int, "residual stream width, a multiple of the heads");
    addField(model, "heads", "heads", Field::Int, "attention heads per block (1 to 64)");
    addField(model, "dropout", "dropout", Field::Real, "dropout probability, [0, 1)");
    m_positional = addCombo(model, "positional encoding", {"none", "learned", "sinusoidal"},
                            "none is NoPE, the object of study");
    m_attention = addCombo(model, "attention", {"causal", "bidirectional"},
                           "bidirectional is the control without the adjacency mechanism");
    m_bias = new QCheckBox("biases in Linear and LayerNorm", this);
    model->addRow("", m_bias);
    connect(m_bias, &QCheckBox::toggled, this, [this] {
        markCustom();
        revalidate();
    });

    QFormLayout* init = group("Initialization");
    m_initScheme =
        addCombo(init, "scheme", {"default", "normal"},
                 "default: nanoGPT's; normal: N(mean, std) for every non-LayerNorm weight");
    addField(init, "init-mean", "mean", Field::Real, "mean of the normal scheme");
    addField(init, "init-std", "std", Field::Real, "standard deviation of the normal scheme (> 0)");
    addField(init, "seed", "seed", Field::Unsigned, "seed of init, dropout and batch order");

    QFormLayout* train = group("Training");
    m_objective = addCombo(train, "objective", {"lm", "answer"},
                           "lm: every position of windows; answer: the answer tokens only");
    m_precision = addCombo(train, "precision", {"fp32", "bf16"}, "bf16: CPU autocast");
    addField(train, "lr", "learning rate", Field::Real, "peak learning rate, (0, 1]");
    addField(train, "batch", "batch", Field::Int, "sequences per step");
    addField(train, "steps", "steps", Field::Int,
             "optimizer steps; the cosine decay ends at the last step");
    addField(train, "warmup", "warm-up", Field::Int, "linear warm-up steps");
    addField(train, "eval-every", "evaluate every", Field::Int, "steps between test evaluations");
    addField(train, "eval-samples", "test examples", Field::Int,
             "examples per evaluation, 0 = the whole test set");

    QFormLayout* analysis = group("Analysis");
    addField(analysis, "analysis-samples", "prompts", Field::Int, "test prompts per snapshot");
    QStringList points;
    for (CapturePoint p : allCapturePoints()) {
        if (p != CapturePoint::Embedding) {
            points << QString::fromStdString(toString(p));
        }
    }
    m_point = addCombo(analysis, "capture point", points,
                       "attn: attention output before c_proj (the paper's layers); attn_in: "
                       "LayerNorm input of attention; resid: residual stream after the block");
    m_point->setCurrentText("attn");
    addField(analysis, "snapshot-every", "snapshot every", Field::Int, "steps between snapshots");
    addField(analysis, "probe-every", "probes every", Field::Int,
             "snapshots between position-probe runs during training (0 = none); probes also "
             "run at init and in the last snapshot");
    m_probePreset = addCombo(analysis, "probe size", {"fast", "full"},
                             "fast: a small MLP for the live view; full: the authors' 4-layer "
                             "MLP, 20 epochs (minutes for a 6-layer model)");
    addField(analysis, "length", "probe length", Field::Int,
             "characters of each random probe string (the model must accept it)");

    m_otherErrors = new QLabel(this);
    m_otherErrors->setWordWrap(true);
    m_otherErrors->setStyleSheet("color: #d04040");
    outer->addWidget(m_otherErrors);
    outer->addStretch(1);

    connect(m_task, &QComboBox::currentTextChanged, this, [this] {
        if (m_filling) {
            return;
        }
        if (m_preset->currentText() != "custom") {
            applyPreset();  // the quick preset differs per task
        }
        revalidate();
    });
    connect(m_preset, &QComboBox::currentTextChanged, this, [this] {
        if (!m_filling && m_preset->currentText() != "custom") {
            applyPreset();
        }
        revalidate();
    });
    for (QComboBox* combo :
         {m_positional, m_attention, m_initScheme, m_objective, m_precision, m_probePreset}) {
        connect(combo, &QComboBox::currentTextChanged, this, [this] {
            markCustom();
            revalidate();
        });
    }
    connect(m_point, &QComboBox::currentTextChanged, this,
            [this] { Q_EMIT capturePointChanged(capturePoint()); });
    applyPreset();
    revalidate();
}

QLineEdit* ConfigForm::addField(QFormLayout* form, const QString& name, const QString& label,
                                Field::Kind kind, const QString& tip) {
    auto* row = new QWidget(this);
    auto* layout = new QVBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(1);
    auto* edit = new QLineEdit(row);
    edit->setToolTip(tip);
    edit->setObjectName(name);
    auto* error = new QLabel(row);
    error->setWordWrap(true);
    error->setStyleSheet("color: #d04040; font-size: 9pt");
    error->hide();
    layout->addWidget(edit);
    layout->addWidget(error);
    form->addRow(label, row);
    m_fields[name] = Field{kind, edit, error};
    connect(edit, &QLineEdit::textEdited, this, [this] {
        markCustom();
        revalidate();
    });
    return edit;
}

QComboBox* ConfigForm::addCombo(QFormLayout* form, const QString& label, const QStringList& items,
                                const QString& tip) {
    auto* combo = new QComboBox(this);
    combo->addItems(items);
    combo->setToolTip(tip);
    form->addRow(label, combo);
    return combo;
}

void ConfigForm::markCustom() {
    if (!m_filling && m_preset->currentText() != "custom") {
        m_filling = true;
        m_preset->setCurrentText("custom");
        m_filling = false;
    }
}

void ConfigForm::applyPreset() {
    const auto task = parseTask(m_task->currentText().toStdString());
    const auto preset = makePreset(m_preset->currentText().toStdString(), *task);
    if (!preset) {
        return;
    }
    RunSpec spec{*task, preset->model, preset->train, preset->name};
    spec.train.seed = m_spec.train.seed;  // keep the user's seed across presets
    setSpec(spec);
}

void ConfigForm::setSpec(const RunSpec& spec) {
    m_filling = true;
    m_task->setCurrentText(QString::fromStdString(taskName(spec.task)));
    const QString preset = QString::fromStdString(spec.preset);
    m_preset->setCurrentText(m_preset->findText(preset) >= 0 ? preset : "custom");
    const ModelConfig& m = spec.model;
    const TrainConfig& t = spec.train;
    field("layers")->setText(QString::number(m.nLayer));
    field("dim")->setText(QString::number(m.nEmbd));
    field("heads")->setText(QString::number(m.nHead));
    field("dropout")->setText(text(m.dropout));
    m_positional->setCurrentText(QString::fromStdString(toString(m.positional)));
    m_attention->setCurrentText(QString::fromStdString(toString(m.attention)));
    m_bias->setChecked(m.bias);
    m_initScheme->setCurrentText(QString::fromStdString(toString(m.init.scheme)));
    field("init-mean")->setText(text(m.init.mean));
    field("init-std")->setText(text(m.init.std));
    field("seed")->setText(QString::number(t.seed));
    m_objective->setCurrentText(QString::fromStdString(toString(t.objective)));
    m_precision->setCurrentText(QString::fromStdString(toString(t.precision)));
    field("lr")->setText(text(t.learningRate));
    field("batch")->setText(QString::number(t.batchSize));
    field("steps")->setText(QString::number(t.steps));
    field("warmup")->setText(QString::number(t.warmupSteps));
    field("eval-every")->setText(QString::number(t.evalEvery));
    field("eval-samples")->setText(QString::number(t.evalSamples));
    field("analysis-samples")->setText(QString::number(t.analysisSamples));
    field("snapshot-every")->setText(QString::number(t.snapshotEvery));
    field("probe-every")->setText(QString::number(t.probeEvery));
    field("length")->setText(QString::number(t.probe.length));
    const QString probeSize = QString::fromStdString(probePresetName(t.probe));
    if (m_probePreset->findText(probeSize) < 0) {
        m_probePreset->addItem(probeSize);  // "custom": settings from a session or a run
    }
    m_probePreset->setCurrentText(probeSize);
    m_spec = spec;  // keeps the settings the form has no field for
    m_filling = false;
    revalidate();
}

void ConfigForm::revalidate() {
    if (m_filling) {
        return;
    }
    RunSpec spec = m_spec;
    std::vector<FieldError> errors;
    auto integer = [&](const QString& name, int& target) {
        const QString s = field(name)->text().trimmed();
        bool ok = false;
        const int v = s.toInt(&ok);
        if (!ok) {
            errors.push_back({name.toStdString(), "'" + s.toStdString() + "' is not an integer"});
        } else {
            target = v;
        }
    };
    auto real = [&](const QString& name, double& target) {
        const QString s = field(name)->text().trimmed();
        bool ok = false;
        const double v = s.toDouble(&ok);
        if (!ok || !std::isfinite(v)) {
            errors.push_back({name.toStdString(), "'" + s.toStdString() + "' is not a number"});
        } else {
            target = v;
        }
    };
    spec.task = *parseTask(m_task->currentText().toStdString());
    spec.preset = m_preset->currentText().toStdString();
    ModelConfig& m = spec.model;
    TrainConfig& t = spec.train;
    integer("layers", m.nLayer);
    integer("dim", m.nEmbd);
    integer("heads", m.nHead);
    real("dropout", m.dropout);
    m.positional = *parsePositional(m_positional->currentText().toStdString());
    m.attention = *parseAttention(m_attention->currentText().toStdString());
    m.bias = m_bias->isChecked();
    m.init.scheme = *parseInitScheme(m_initScheme->currentText().toStdString());
    real("init-mean", m.init.mean);
    real("init-std", m.init.std);
    {
        const std::string s = field("seed")->text().trimmed().toStdString();
        uint64_t v = 0;
        const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) {
            errors.push_back({"seed", "'" + s + "' is not a non-negative integer"});
        } else {
            t.seed = v;
        }
    }
    t.objective = *parseObjective(m_objective->currentText().toStdString());
    t.precision = *parsePrecision(m_precision->currentText().toStdString());
    real("lr", t.learningRate);
    integer("batch", t.batchSize);
    integer("steps", t.steps);
    t.decaySteps = t.steps;
    integer("warmup", t.warmupSteps);
    integer("eval-every", t.evalEvery);
    integer("eval-samples", t.evalSamples);
    integer("analysis-samples", t.analysisSamples);
    integer("snapshot-every", t.snapshotEvery);
    integer("probe-every", t.probeEvery);
    {
        const auto preset = probePreset(m_probePreset->currentText().toStdString());
        if (preset && probePresetName(t.probe) != m_probePreset->currentText().toStdString()) {
            const uint64_t seed = t.probe.seed;
            t.probe = *preset;
            t.probe.seed = seed;
        }
    }
    integer("length", t.probe.length);
    t.keepPrompts = std::min(t.keepPrompts, std::max(0, t.analysisSamples));
    if (errors.empty()) {
        errors = validate(spec);
    }

    QStringList other;
    for (auto& [name, f] : m_fields) {
        f.error->clear();
        f.error->hide();
        f.edit->setStyleSheet("");
    }
    for (const auto& e : errors) {
        const auto it = m_fields.find(QString::fromStdString(e.field));
        if (it == m_fields.end()) {
            other << QString::fromStdString(describe(e));
            continue;
        }
        Field& f = it->second;
        if (f.error->text().isEmpty()) {
            f.error->setText(QString::fromStdString(e.message));
            f.error->show();
            f.edit->setStyleSheet("border: 1px solid #d04040");
        }
    }
    m_otherErrors->setText(other.join("\n"));
    m_errors = errors;
    if (errors.empty()) {
        m_spec = spec;
    }
    if (isValid() != m_wasValid) {
        m_wasValid = isValid();
        Q_EMIT validityChanged(m_wasValid);
    }
    Q_EMIT changed();
}

CapturePoint ConfigForm::capturePoint() const {
    return parseCapturePoint(m_point->currentText().toStdString()).value_or(CapturePoint::Attn);
}

void ConfigForm::setCapturePoint(CapturePoint point) {
    m_point->setCurrentText(QString::fromStdString(toString(point)));
}

QStringList ConfigForm::errors() const {
    QStringList out;
    for (const auto& e : m_errors) {
        out << QString::fromStdString(describe(e));
    }
    return out;
}

QLineEdit* ConfigForm::field(const QString& name) const {
    const auto it = m_fields.find(name);
    return it == m_fields.end() ? nullptr : it->second.edit;
}

QString ConfigForm::fieldError(const QString& name) const {
    const auto it = m_fields.find(name);
    return it == m_fields.end() ? QString() : it->second.error->text();
}

QByteArray ConfigForm::sessionJson() const {
    nlohmann::json j = toJson(m_spec);
    j["capture_point"] = toString(capturePoint());
    j["format"] = "nopescope-session-1";
    return QByteArray::fromStdString(j.dump(2) + "\n");
}

QString ConfigForm::loadSessionJson(const QByteArray& json) {
    try {
        const auto j = nlohmann::json::parse(json.toStdString());
        const RunSpec spec = runSpecFromJson(j);
        const FieldErrors errors = validate(spec);
        if (!errors.empty()) {
            return QString::fromStdString("the session's settings are invalid: " +
                                          describe(errors.front()));
        }
        std::optional<CapturePoint> point;
        if (j.contains("capture_point")) {
            point = parseCapturePoint(j.at("capture_point").get<std::string>());
            if (!point || *point == CapturePoint::Embedding) {
                return "capture_point: " + QString::fromStdString(j.at("capture_point").dump()) +
                       " is not allowed (allowed: attn_in, attn, resid)";
            }
        }
        setSpec(spec);
        if (point) {
            setCapturePoint(*point);
        }
        return {};
    } catch (const std::exception& e) {
        return QString("not a NoPEScope session: %1").arg(e.what());
    }
}

}  // namespace nope::ui
