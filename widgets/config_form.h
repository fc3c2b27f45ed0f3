// The run form: task, preset, model, init, training and analysis settings. Every field is checked
// as it is edited (with the same validation as the CLI's flags) and the reason is shown beside
// it; isValid() is false while any field is invalid.
#pragma once

#include <QWidget>

#include <map>

#include "model/capture_point.h"
#include "run/run_spec.h"

class QComboBox;
class QCheckBox;
class QFormLayout;
class QLabel;
class QLineEdit;

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
    // Every current problem as "--field: message".
    QStringList errors() const;

    // For tests and scripting: the editor of a field (by its CLI flag name) and its message.
    QLineEdit* field(const QString& name) const;
    QString fieldError(const QString& name) const;

    // Session files: the spec plus the display choices, as JSON text.
    QByteArray sessionJson() const;
    // Returns an error message, empty on success; the form is unchanged on failure.
    QString loadSessionJson(const QByteArray& json);

Q_SIGNALS:
    void changed();  // any edit, after validation
    void validityChanged(bool valid);
    void capturePointChanged(CapturePoint point);

private:
    struct Field {
        enum Kind { Int, Real, Unsigned } kind;
        QLineEdit* edit;
        QLabel* error;
    };
    QLineEdit* addField(QFormLayout* form, const QString& name, const QString& label,
                        Field::Kind kind, const QString& tip);
    QComboBox* addCombo(QFormLayout* form, const QString& label, const QStringList& items,
                        const QString& tip);
    void applyPreset();
    void revalidate();
    void markCustom();

    std::map<QString, Field> m_fields;
    QComboBox* m_task;
    QComboBox* m_preset;
    QComboBox* m_positional;
    QComboBox* m_attention;
    QComboBox* m_initScheme;
    QComboBox* m_objective;
    QComboBox* m_precision;
    QComboBox* m_point;
    QComboBox* m_probePreset;
    QCheckBox* m_bias;
    QLabel* m_otherErrors;
    RunSpec m_spec;
    std::vector<FieldError> m_errors;
    bool m_filling = false;
    bool m_wasValid = true;
};

}  // namespace nope::ui
