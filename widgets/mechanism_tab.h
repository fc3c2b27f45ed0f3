// The Mechanism tab, two pages. Averaging, simulated: the averaging effect of causal attention
// without a model. Random input vectors averaged over earlier tokens with uniform or random
// softmax weights; the mean self-cosine matrix beside the closed form sqrt(k/m) of uniform
// averaging, and the adjacency score, updating as the sliders move. The tab asks
// (simulateRequested) and draws the answer (showResult); the window runs the simulation
// (mechanism/averaging.h), with the form's model at init where the weights are its first layer's
// or the inputs its token embeddings (then the task's prompts set the length, the model's width
// the dimension). Ablations at init: widgets/ablation_panel.h.
#pragma once

#include <QTimer>
#include <QWidget>

#include "mechanism/averaging.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QSlider;
class QSpinBox;
class QTabWidget;

namespace nope::ui {

class AblationPanel;
class HeatmapGrid;

class MechanismTab : public QWidget {
    Q_OBJECT

public:
    explicit MechanismTab(QWidget* parent = nullptr);

    AveragingConfig config() const;
    void setConfig(const AveragingConfig& config);
    HeatmapGrid* heatmaps() const { return m_heatmaps; }
    AblationPanel* ablations() const { return m_ablations; }
    // Shows the ablation page (true) or the simulation's.
    void showAblations(bool ablations);
    QString scoreText() const;
    // A change of the controls waits for more before it asks (the request is pending).
    bool requestPending() const { return m_debounce.isActive(); }

public Q_SLOTS:
    void showResult(const nope::AveragingResult& result);

Q_SIGNALS:
    // The settings changed (coalesced: at most one request per 120 ms of slider movement).
    void simulateRequested(const nope::AveragingConfig& config);

private:
    void changed();
    void updateLabels();

    QComboBox* m_weights;
    QComboBox* m_inputs;
    QCheckBox* m_causal;
    QSlider* m_length;
    QSlider* m_dim;
    QSlider* m_temperature;  // log10(t) x 10, from -20 (0.01) to 20 (100)
    QSpinBox* m_samples;
    QLabel* m_lengthText;
    QLabel* m_dimText;
    QLabel* m_temperatureText;
    QLabel* m_score;
    HeatmapGrid* m_heatmaps;
    AblationPanel* m_ablations;
    QTabWidget* m_pages;
    QTimer m_debounce;
    AveragingConfig m_shown;  // the settings of the result on screen
};

}  // namespace nope::ui

Q_DECLARE_METATYPE(nope::AveragingConfig)
Q_DECLARE_METATYPE(nope::AveragingResult)
