#include "widgets/config_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QToolButton>
#include <QVBoxLayout>

#include <nlohmann/json.hpp>

#include "util/memory.h"

#include "settings/settings.h"
#include "training/presets.h"
#include "util/error_text.h"
#include "widgets/plot_style.h"
#include "widgets/theme_colors.h"

namespace nope::ui {

namespace {

QStringList names(const std::vector<std::string>& items) {
    QStringList out;
    for (const auto& s : items) {
        out << QString::fromStdString(s);
    }
    return out;
}

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

// The theme's error colour (resources/theme.json), for style sheets.
QString errorColor(const QWidget* widget) {
    return themeColor(ThemeColor::Error, isDark(widget->palette())).name();
}

}  // namespace

ConfigForm::ConfigForm(QWidget* parent) : QWidget(parent) {
    auto* outer = new QVBoxLayout(this);
    auto* taskBox = new QGroupBox("Task", this);
    auto* taskForm = new QFormLayout(taskBox);
    taskForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    QStringList tasks;
    for (TaskKind t : allTasks()) {
        tasks << qs(taskName(t));
    }
    m_task = new QComboBox(this);
    m_task->addItems(tasks);
    m_task->setToolTip("the synthetic task to learn");
    taskForm->addRow("task", m_task);
    m_preset = new QComboBox(this);
    m_preset->addItems(names(presetNames()) << "custom");
    m_preset->setToolTip(
        "quick: minutes on a CPU (2 layers); cpu: the paper's 6-layer model for a CPU; paper: "
        "the authors' setup; custom: your edits");
    taskForm->addRow("preset", m_preset);
    outer->addWidget(taskBox);
    m_estimate = new QLabel(this);
    m_estimate->setWordWrap(true);
    m_estimate->setToolTip(
        "the run's wall time on this machine, from a short timing of its step, an evaluation "
        "and an analysis; nopescope-cli train --check times it in full");
    m_estimate->hide();
    outer->addWidget(m_estimate);

    m_point = new QComboBox(this);
    for (CapturePoint p : allCapturePoints()) {
        if (p != CapturePoint::Embedding) {
            m_point->addItem(qs(toString(p)));
        }
    }
    m_point->setCurrentText("attn");
    m_point->setToolTip(
        "the hidden states the heatmaps and scores show: attn, the attention output before c_proj "
        "(the paper's layers); attn_in, the LayerNorm input of attention; resid, the residual "
        "stream after the block");
    m_probePreset = new QComboBox(this);
    m_probePreset->addItems({"fast", "full"});
    m_probePreset->setToolTip(
        "the probe network and data: fast, a small MLP for the live view; full, the authors' "
        "4-layer MLP, 20 epochs (minutes for a 6-layer model); custom after your edits below");
    for (SettingSection section :
         {SettingSection::Model, SettingSection::Init, SettingSection::Training,
          SettingSection::Data, SettingSection::Analysis, SettingSection::Probe}) {
        addSection(section, section == SettingSection::Analysis ? m_point
                            : section == SettingSection::Probe  ? m_probePreset
                                                                : nullptr);
    }

    m_otherErrors = new QLabel(this);
    m_otherErrors->setWordWrap(true);
    m_otherErrors->setStyleSheet(QString("color: %1").arg(errorColor(this)));
    outer->addWidget(m_otherErrors);
    outer->addStretch(1);

    connectChoices();
    applyPreset();
    revalidate();
}

void ConfigForm::setEstimate(const QString& text) {
    m_estimate->setText(text);
    m_estimate->setVisible(!text.isEmpty());
}

QString ConfigForm::estimate() const {
    return m_estimate->text();
}

// Task and preset refill the form; the probe preset refills the probe rows.
void ConfigForm::connectChoices() {
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
    connect(m_probePreset, &QComboBox::currentTextChanged, this, [this] {
        if (!m_filling) {
            applyProbePreset();
        }
    });
    connect(m_point, &QComboBox::currentTextChanged, this,
            [this] { Q_EMIT capturePointChanged(capturePoint()); });
}

void ConfigForm::addSection(SettingSection section, QWidget* extra) {
    auto* box = new QGroupBox(qs(sectionTitle(section)), this);
    auto* boxLayout = new QVBoxLayout(box);
    auto* main = new QFormLayout;
    main->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    boxLayout->addLayout(main);
    if (extra) {
        main->addRow(extra == m_point ? "capture-point" : "probe-preset", extra);
    }
    auto* more = new QToolButton(box);
    more->setText("more settings");
    more->setCheckable(true);
    more->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    more->setArrowType(Qt::RightArrow);
    more->setAutoRaise(true);
    auto* moreBox = new QWidget(box);
    auto* moreForm = new QFormLayout(moreBox);
    moreForm->setContentsMargins(0, 0, 0, 0);
    moreForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    moreBox->hide();
    connect(more, &QToolButton::toggled, moreBox, [more, moreBox](bool open) {
        moreBox->setVisible(open);
        more->setArrowType(open ? Qt::DownArrow : Qt::RightArrow);
    });
    int hidden = 0;
    for (const Setting* s : settingsIn({section})) {
        Row row = makeRow(*s, box);
        QWidget* cell = row.error->parentWidget();
        if (s->primary) {
            main->addRow(qs(s->label), cell);
        } else {
            moreForm->addRow(qs(s->label), cell);
            row.more = more;
            ++hidden;
        }
        m_byName[qs(s->name)] = m_rows.size();
        m_rows.push_back(row);
    }
    if (hidden > 0) {
        more->setText(QString("%1 more").arg(hidden));
        boxLayout->addWidget(more, 0, Qt::AlignLeft);
        boxLayout->addWidget(moreBox);
    } else {
        delete more;
        delete moreBox;
    }
    static_cast<QVBoxLayout*>(layout())->addWidget(box);
}

ConfigForm::Row ConfigForm::makeRow(const Setting& s, QWidget* parent) {
    Row row;
    row.setting = &s;
    auto* cell = new QWidget(parent);
    auto* layout = new QVBoxLayout(cell);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(1);
    const QString tip = qs(renderForForm(s.help)) + "\nallowed: " + qs(renderForForm(s.allowed));
    QWidget* editor = nullptr;
    auto edited = [this, name = s.name] {
        if (m_filling) {
            return;
        }
        // the decay follows the step count until it is set to end elsewhere
        Row& steps = m_rows[m_byName.at("steps")];
        Row& decay = m_rows[m_byName.at("decay-steps")];
        if (name == "decay-steps") {
            m_decayFollows = rowText(decay) == rowText(steps);
        } else if (name == "steps" && m_decayFollows) {
            m_filling = true;
            setRowText(decay, rowText(steps));
            m_filling = false;
        }
        markCustom();
        revalidate();
    };
    if (s.type == SettingType::Switch) {
        row.check = new QCheckBox(cell);
        connect(row.check, &QCheckBox::toggled, this, edited);
        editor = row.check;
    } else if (s.type == SettingType::Choice) {
        row.combo = new QComboBox(cell);
        row.combo->addItems(names(s.choices));
        connect(row.combo, &QComboBox::currentTextChanged, this, edited);
        editor = row.combo;
    } else {
        row.line = new QLineEdit(cell);
        connect(row.line, &QLineEdit::textEdited, this, edited);
        editor = row.line;
    }
    editor->setObjectName(qs(s.name));
    editor->setToolTip(tip);
    row.error = new QLabel(cell);
    row.error->setWordWrap(true);
    row.error->setStyleSheet(QString("color: %1; font-size: 9pt").arg(errorColor(this)));
    row.error->hide();
    layout->addWidget(editor);
    layout->addWidget(row.error);
    return row;
}

QString ConfigForm::rowText(const Row& row) const {
    if (row.check) {
        return row.check->isChecked() ? "true" : "false";
    }
    if (row.combo) {
        return row.combo->currentText();
    }
    return row.line->text().trimmed();
}

void ConfigForm::setRowText(Row& row, const QString& text) {
    if (row.check) {
        row.check->setChecked(text == "true");
    } else if (row.combo) {
        row.combo->setCurrentText(text);
    } else {
        row.line->setText(text);
    }
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

void ConfigForm::applyProbePreset() {
    const auto preset = probePreset(m_probePreset->currentText().toStdString());
    if (!preset) {
        return;  // "custom" is what the fields say
    }
    RunSpec spec = m_spec;
    spec.train.probe = *preset;
    spec.train.probe.seed = m_spec.train.probe.seed;
    spec.train.probe.length = m_spec.train.probe.length;
    setSpec(spec);
    markCustom();
    revalidate();
}

void ConfigForm::setSpec(const RunSpec& spec) {
    m_filling = true;
    m_task->setCurrentText(qs(taskName(spec.task)));
    const QString preset = qs(spec.preset);
    m_preset->setCurrentText(m_preset->findText(preset) >= 0 ? preset : "custom");
    for (Row& row : m_rows) {
        setRowText(row, qs(row.setting->get(spec)));
    }
    const QString probeSize = qs(probePresetName(spec.train.probe));
    if (m_probePreset->findText(probeSize) < 0) {
        m_probePreset->addItem(probeSize);  // "custom": settings from a session, a run or edits
    }
    m_probePreset->setCurrentText(probeSize);
    m_spec = spec;  // keeps the settings the form has no field for
    m_decayFollows = spec.train.decaySteps == spec.train.steps;
    m_filling = false;
    revalidate();
}

void ConfigForm::revalidate() {
    if (m_filling) {
        return;
    }
    RunSpec spec = m_spec;
    spec.task = *parseTask(m_task->currentText().toStdString());
    spec.preset = m_preset->currentText().toStdString();
    FieldErrors errors;
    for (const Row& row : m_rows) {
        if (auto error = row.setting->set(spec, rowText(row).toStdString())) {
            errors.push_back({row.setting->name, *error});
        }
    }
    for (auto& e : validate(spec)) {
        errors.push_back(std::move(e));
    }
    if (errors.empty()) {  // a model too large for this machine: refused before allocation
        if (auto memory = trainingMemoryError(spec)) {
            errors.push_back(std::move(*memory));
        }
    }
    showErrors(errors);
    m_errors = errors;
    if (errors.empty()) {
        m_spec = spec;
        const QString probeSize = qs(probePresetName(spec.train.probe));
        if (m_probePreset->findText(probeSize) < 0) {
            m_probePreset->addItem(probeSize);
        }
        m_filling = true;
        m_probePreset->setCurrentText(probeSize);
        m_filling = false;
    }
    if (isValid() != m_wasValid) {
        m_wasValid = isValid();
        Q_EMIT validityChanged(m_wasValid);
    }
    Q_EMIT changed();
}

void ConfigForm::showErrors(const FieldErrors& errors) {
    for (Row& row : m_rows) {
        row.error->clear();
        row.error->hide();
        if (row.line) {
            row.line->setStyleSheet("");
        }
    }
    QStringList other;
    for (const auto& e : errors) {
        const auto it = m_byName.find(qs(e.field));
        if (it == m_byName.end()) {
            other << qs(describeForForm(e));
            continue;
        }
        Row& row = m_rows[it->second];
        if (!row.error->text().isEmpty()) {
            continue;  // the first problem of a field is the one to fix
        }
        row.error->setText(qs(renderForForm(e.message)));
        row.error->show();
        if (row.line) {
            row.line->setStyleSheet(QString("border: 1px solid %1").arg(errorColor(this)));
        }
        if (row.more && !row.more->isChecked()) {
            row.more->setChecked(true);  // a problem is never hidden under "more"
        }
    }
    m_otherErrors->setText(other.join("\n"));
}

CapturePoint ConfigForm::capturePoint() const {
    return parseCapturePoint(m_point->currentText().toStdString()).value_or(CapturePoint::Attn);
}

void ConfigForm::setCapturePoint(CapturePoint point) {
    m_point->setCurrentText(qs(toString(point)));
}

QStringList ConfigForm::errors() const {
    QStringList out;
    for (const auto& e : m_errors) {
        out << qs(describeForForm(e));
    }
    return out;
}

QLineEdit* ConfigForm::field(const QString& name) const {
    const auto it = m_byName.find(name);
    return it == m_byName.end() ? nullptr : m_rows[it->second].line;
}

QWidget* ConfigForm::editor(const QString& name) const {
    const auto it = m_byName.find(name);
    if (it == m_byName.end()) {
        return nullptr;
    }
    const Row& row = m_rows[it->second];
    return row.line    ? static_cast<QWidget*>(row.line)
           : row.combo ? static_cast<QWidget*>(row.combo)
                       : row.check;
}

QString ConfigForm::fieldError(const QString& name) const {
    const auto it = m_byName.find(name);
    return it == m_byName.end() ? QString() : m_rows[it->second].error->text();
}

QString ConfigForm::label(const QString& name) const {
    const auto it = m_byName.find(name);
    return it == m_byName.end() ? QString() : qs(m_rows[it->second].setting->label);
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
            return qs("the session's settings are invalid: " + describeForForm(errors.front()));
        }
        std::optional<CapturePoint> point;
        if (j.contains("capture_point")) {
            point = parseCapturePoint(j.at("capture_point").get<std::string>());
            if (!point || *point == CapturePoint::Embedding) {
                return "capture_point: " + qs(j.at("capture_point").dump()) +
                       " is not allowed (allowed: attn_in, attn, resid)";
            }
        }
        setSpec(spec);
        if (point) {
            setCapturePoint(*point);
        }
        return {};
    } catch (const std::exception& e) {
        return QString("not a NoPEScope session: %1")
            .arg(QString::fromStdString(nope::errorText(e)));
    }
}

}  // namespace nope::ui
