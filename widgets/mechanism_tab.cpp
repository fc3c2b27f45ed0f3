#include "widgets/mechanism_tab.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QVBoxLayout>

#include <cmath>

#include "widgets/ablation_panel.h"
#include "widgets/heatmap_grid.h"

namespace nope::ui {

namespace {

QSlider* slider(int lo, int hi, int value, const QString& tip, QWidget* parent) {
    auto* s = new QSlider(Qt::Horizontal, parent);
    s->setRange(lo, hi);
    s->setValue(value);
    s->setToolTip(tip);
    return s;
}

double temperatureOf(int position) {
    return std::pow(10.0, position / 10.0);
}

}  // namespace

MechanismTab::MechanismTab(QWidget* parent)
    : QWidget(parent),
      m_weights(new QComboBox(this)),
      m_inputs(new QComboBox(this)),
      m_causal(new QCheckBox("causal", this)),
      m_length(slider(3, 128, 32, "tokens per sequence (T)", this)),
      m_dim(slider(1, 1024, 64, "dimensions of the random input vectors (d)", this)),
      m_temperature(
          slider(-20, 20, 0, "random weights: softmax(scores / t), t from 0.01 to 100", this)),
      m_samples(new QSpinBox(this)),
      m_lengthText(new QLabel(this)),
      m_dimText(new QLabel(this)),
      m_temperatureText(new QLabel(this)),
      m_score(new QLabel(this)),
      m_heatmaps(new HeatmapGrid(this)),
      m_ablations(new AblationPanel(this)),
      m_pages(new QTabWidget(this)) {
    m_weights->addItem("uniform weights", "uniform");
    m_weights->addItem("random softmax weights", "random");
    m_weights->addItem("the model's first-layer weights", "model");
    m_weights->setToolTip(
        "how each token averages the tokens it sees; the model's: the attention weights of the "
        "form's model at init, layer 1, on the task's test prompts (sequence n: prompt n, head n "
        "mod heads)");
    m_inputs->addItem("gaussian inputs", "gaussian");
    m_inputs->addItem("the model's token embeddings", "tokens");
    m_inputs->setToolTip(
        "the vectors averaged: independent N(0, 1) entries, or the form's model's token "
        "embeddings of the task's test prompts (the prompts then set the length, the model's "
        "width the dimension)");
    m_causal->setChecked(true);
    m_causal->setToolTip("unchecked: every token averages all tokens (the bidirectional control)");
    m_samples->setRange(1, 2048);
    m_samples->setValue(256);
    m_samples->setToolTip("sequences averaged; the score is their mean");
    auto* controls = new QGridLayout;
    auto* choices = new QHBoxLayout;
    choices->addWidget(m_weights);
    choices->addWidget(m_inputs);
    choices->addWidget(m_causal);
    choices->addStretch(1);
    controls->addLayout(choices, 0, 0, 1, 2);
    controls->addWidget(new QLabel("samples"), 0, 2);
    controls->addWidget(m_samples, 0, 3);
    const struct {
        const char* name;
        QSlider* slider;
        QLabel* text;
    } rows[] = {{"length", m_length, m_lengthText},
                {"dimension", m_dim, m_dimText},
                {"temperature", m_temperature, m_temperatureText}};
    int row = 1;
    for (const auto& r : rows) {
        controls->addWidget(new QLabel(r.name), row, 0);
        controls->addWidget(r.slider, row, 1, 1, 2);
        controls->addWidget(r.text, row, 3);
        connect(r.slider, &QSlider::valueChanged, this, &MechanismTab::changed);
        ++row;
    }
    controls->setColumnStretch(1, 1);
    m_score->setWordWrap(true);
    auto* simulated = new QWidget(this);
    auto* layout = new QVBoxLayout(simulated);
    layout->addLayout(controls);
    layout->addWidget(m_score);
    layout->addWidget(m_heatmaps, 1);
    m_pages->addTab(simulated, "Averaging, simulated");
    m_pages->addTab(m_ablations, "Ablations at init");
    m_pages->setToolTip(
        "Averaging, simulated: the averaging effect with no model at all. Ablations at init: the "
        "form's model with one switch of its attention or its inputs at a time.");
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(m_pages);
    connect(m_weights, &QComboBox::currentIndexChanged, this, &MechanismTab::changed);
    connect(m_inputs, &QComboBox::currentIndexChanged, this, &MechanismTab::changed);
    connect(m_causal, &QCheckBox::toggled, this, &MechanismTab::changed);
    connect(m_samples, &QSpinBox::valueChanged, this, &MechanismTab::changed);
    m_debounce.setSingleShot(true);
    m_debounce.setInterval(120);
    connect(&m_debounce, &QTimer::timeout, this, [this] { Q_EMIT simulateRequested(config()); });
    updateLabels();
}

AveragingConfig MechanismTab::config() const {
    AveragingConfig c;
    c.weights = *parseAveragingWeights(m_weights->currentData().toString().toStdString());
    c.inputs = *parseAveragingInputs(m_inputs->currentData().toString().toStdString());
    c.causal = m_causal->isChecked();
    c.length = m_length->value();
    c.dim = m_dim->value();
    c.temperature = temperatureOf(m_temperature->value());
    c.samples = m_samples->value();
    return c;
}

void MechanismTab::setConfig(const AveragingConfig& c) {
    m_weights->setCurrentIndex(
        std::max(0, m_weights->findData(QString::fromStdString(toString(c.weights)))));
    m_inputs->setCurrentIndex(
        std::max(0, m_inputs->findData(QString::fromStdString(toString(c.inputs)))));
    m_causal->setChecked(c.causal);
    m_length->setValue(c.length);
    m_dim->setValue(c.dim);
    m_temperature->setValue(static_cast<int>(std::lround(10.0 * std::log10(c.temperature))));
    m_samples->setValue(c.samples);
    changed();
}

void MechanismTab::changed() {
    updateLabels();
    m_debounce.start();
}

void MechanismTab::updateLabels() {
    m_lengthText->setText(QString("T = %1").arg(m_length->value()));
    m_dimText->setText(QString("d = %1").arg(m_dim->value()));
    m_temperatureText->setText(
        QString("t = %1").arg(temperatureOf(m_temperature->value()), 0, 'g', 3));
    const bool random = m_weights->currentData().toString() == "random";
    m_temperature->setEnabled(random);
    m_temperatureText->setEnabled(random);
    const AveragingConfig c = config();  // a model's prompts set T, its width d, its attention
    m_length->setEnabled(!needsModel(c));
    m_lengthText->setEnabled(!needsModel(c));
    m_dim->setEnabled(c.inputs == AveragingInputs::Gaussian);
    m_dimText->setEnabled(c.inputs == AveragingInputs::Gaussian);
    m_causal->setEnabled(c.weights != AveragingWeights::Model);
}

QString MechanismTab::scoreText() const {
    return m_score->text();
}

void MechanismTab::showResult(const AveragingResult& r) {
    const AveragingConfig c = config();
    const bool closedForm = closedFormApplies(c);
    std::vector<Heatmap> maps;
    maps.push_back({QString("simulated, mean over %1 sequences: %2")
                        .arg(c.samples)
                        .arg(r.adjacencyMean, 0, 'f', 3),
                    r.length,
                    r.meanMatrix,
                    {}});
    QString text = QString(
                       "Adjacency score %1 ± %2 over %3 sequences of %4 tokens x %5 "
                       "dimensions, %6 averaging.")
                       .arg(r.adjacencyMean, 0, 'f', 4)
                       .arg(r.adjacencyStd, 0, 'f', 4)
                       .arg(c.samples)
                       .arg(r.length)
                       .arg(r.dim)
                       .arg(c.weights == AveragingWeights::Model
                                ? QString("first-layer attention")
                                : QString("%1 %2")
                                      .arg(c.causal ? "causal" : "bidirectional")
                                      .arg(QString::fromStdString(toString(c.weights))));
    if (needsModel(c)) {
        text += QString(" From the form's model at init: %1 of the task's test prompts.")
                    .arg(c.weights == AveragingWeights::Model
                             ? (c.inputs == AveragingInputs::Tokens
                                    ? "its first layer's weights and token embeddings"
                                    : "its first layer's weights")
                             : "its token embeddings");
    }
    if (closedForm) {
        std::vector<float> closed = uniformAveragingCosine(r.length);
        text += QString(
                    " The closed form sqrt(k/m) of uniform averaging (right) is within %1 of "
                    "the simulated mean everywhere.")
                    .arg(largestLowerDifference(r.meanMatrix, closed, r.length), 0, 'f', 4);
        maps.push_back({"closed form sqrt(k/m): 1.000", r.length, std::move(closed), {}});
    } else if (!c.causal && c.weights != AveragingWeights::Model) {
        text += " Every token averages the same tokens: identical rows, no adjacency pattern.";
    }
    m_score->setText(text);
    m_heatmaps->setColumns(static_cast<int>(maps.size()));
    m_heatmaps->setHeatmaps(std::move(maps));
}

void MechanismTab::showAblations(bool ablations) {
    m_pages->setCurrentIndex(ablations ? 1 : 0);
}

}  // namespace nope::ui
