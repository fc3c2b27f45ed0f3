// The run form: the task and preset, then one row per setting of the table (settings/settings.h),
// grouped by section; each section shows its main settings and keeps the others under "more".
// Every field is checked as it is edited, with the same validation as the CLI, and the reason is
// shown under it; isValid() is false while any field is invalid.
#pragma once

#include <QWidget>

#include <map>
#include <vector>

#include "model/capture_point.h"
#include "run/run_spec.h"
#include "settings/setting.h"
#include "util/field_error.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QToolButton;

namespace nope::ui {

class ConfigForm : public QWidget {
    Q_OBJECT

public:
    explicit ConfigForm(QWidget* parent = nullptr);

    bool isValid() const { return m_errors.empty(); }
    // The settings on the form; meaningful when isValid().
    RunSpec spec() const { return m_spec; }
    void setSpec(const RunSpec& spec);
    CapturePoint capturePoint() const;
    void setCapturePoint(CapturePoint point);
    // Every current problem as "label: message".
    QStringList errors() const;

    // For tests and scripting, by the setting's name: its text editor (nullptr for a choice or a
    // switch), its editor of any kind, and its current message.
    QLineEdit* field(const QString& name) const;
    QWidget* editor(const QString& name) const;
    QString fieldError(const QString& name) const;
    // The label the form shows for a setting.
    QString label(const QString& name) const;
    // The task and preset choices (not settings of the table).
    QComboBox* taskChoice() const { return m_task; }
    QComboBox* presetChoice() const { return m_preset; }

    // A line under the task and preset on what the run will cost (the window's estimate of a
    // long run's wall time); empty hides it.
    void setEstimate(const QString& text);
    QString estimate() const;

    // Session files: the spec plus the display choices, as JSON text.
    QByteArray sessionJson() const;
    // Returns an error message, empty on success; the form is unchanged on failure.
    QString loadSessionJson(const QByteArray& json);

Q_SIGNALS:
    void changed();  // any edit, after validation
    void validityChanged(bool valid);
    void capturePointChanged(CapturePoint point);

private:
    struct Row {
        const Setting* setting = nullptr;
        QLineEdit* line = nullptr;
        QComboBox* combo = nullptr;
        QCheckBox* check = nullptr;
        QLabel* error = nullptr;
        QToolButton* more = nullptr;  // the section's "more" button when the row is under it
    };
    void addSection(SettingSection section, QWidget* extra);
    void connectChoices();
    Row makeRow(const Setting& setting, QWidget* parent);
    QString rowText(const Row& row) const;
    void setRowText(Row& row, const QString& text);
    void applyPreset();
    void applyProbePreset();
    void revalidate();
    void markCustom();
    void showErrors(const FieldErrors& errors);

    std::vector<Row> m_rows;
    std::map<QString, size_t> m_byName;
    QComboBox* m_task;
    QComboBox* m_preset;
    QComboBox* m_point;
    QComboBox* m_probePreset;
    QLabel* m_otherErrors;
    QLabel* m_estimate;
    RunSpec m_spec;
    FieldErrors m_errors;
    bool m_filling = false;
    bool m_wasValid = true;
    bool m_decayFollows = true;  // decay-steps is set to follow steps
};

}  // namespace nope::ui
