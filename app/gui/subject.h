// What the window shows: one model or run (its task and shape, where it came from, its folder or
// file) and the step of it on screen. The window holds one Subject; the line above the views and
// the title bar name it, every view draws it or says why it is empty, and Export all writes it
// beside the files. Plain value type: its texts are tested without a window.
#pragma once

#include <QString>

#include <string>

#include "run/run_spec.h"

namespace nope::gui {

enum class SubjectOrigin {
    None,         // no model: nothing to show
    Initialized,  // the form's model at initialization (Initialize)
    Trained,      // a run trained in this window, recorded into its run folder
    OpenedRun,    // a run folder opened from disk and followed (no model behind it)
    ModelFile,    // a saved model opened for analysis and probes (File > Open model)
    Checkpoint,   // a checkpoint loaded to continue training (File > Resume from checkpoint)
};

// What the model or run is doing now.
enum class SubjectPhase { Idle, Building, Training, Paused, Stopped, Finished, Failed };

struct Subject {
    SubjectOrigin origin = SubjectOrigin::None;
    RunSpec spec;       // its task and settings (a model file: its shape, the task it names)
    QString path;       // the run folder written or opened, the model file or the checkpoint
    QString source;     // a run continued from a checkpoint: that checkpoint; else empty
    int step = 0;       // the newest snapshot's step; -1: a model file that does not say
    int liveStep = -1;  // during a run: the step the model is at now (-1: not running)
    SubjectPhase phase = SubjectPhase::Idle;

    bool empty() const { return origin == SubjectOrigin::None; }
};

// The settings as text without the preset's name: equal for two specs of the same model.
std::string specKey(const RunSpec& spec);

// "the form's model at init", "run window-reversal-quick-...", "model file /runs/x/best.pt", ...;
// `brief`: the shorter form of titles and captions ("at initialization", "model file best.pt").
QString originText(const Subject& subject, bool brief = false);
// The line above the views: the task and shape, where it came from, the step shown (`shown`,
// -1 when no snapshot is shown) against the newest, and what it is doing. `formDiffers`: the form
// no longer describes it (its next Initialize or Train builds another model).
QString subjectLine(const Subject& subject, int shown, bool formDiffers);
// The window's title: "NoPEScope: reversal, run window-reversal-... (step 150)".
QString subjectTitle(const Subject& subject, int shown);
// One short line for the figures Export all writes: "reversal, 2 layers x 64 · run
// window-reversal-quick-... · step 150" (names, not paths: it fits above a figure).
QString subjectCaption(const Subject& subject, int shown);
// Why a view that draws snapshots is empty for this subject: what is coming, or what went wrong;
// empty for no subject (each view then says what appears in it once there is a model).
QString emptyReason(const Subject& subject);
// The score table's label of a snapshot of this subject: "init", "step 150", "model (step 200)".
QString stageLabel(const Subject& subject, int step);
// The subject as JSON text, for Export all's export.json: origin, task, path, steps.
QByteArray subjectJson(const Subject& subject, int shown);

}  // namespace nope::gui
