#include "gui/subject.h"

#include <QFileInfo>
#include <QLocale>

#include <nlohmann/json.hpp>

#include "util/enum_names.h"

namespace nope::gui {

namespace {

constexpr EnumName<SubjectOrigin> kOrigins[] = {
    {SubjectOrigin::None, "none"},
    {SubjectOrigin::Initialized, "initialized"},
    {SubjectOrigin::Trained, "trained"},
    {SubjectOrigin::OpenedRun, "opened run folder"},
    {SubjectOrigin::ModelFile, "model file"},
    {SubjectOrigin::Checkpoint, "checkpoint"},
};

constexpr EnumName<SubjectPhase> kPhases[] = {
    {SubjectPhase::Idle, "idle"},         {SubjectPhase::Building, "building"},
    {SubjectPhase::Training, "training"}, {SubjectPhase::Paused, "paused"},
    {SubjectPhase::Stopped, "stopped"},   {SubjectPhase::Finished, "finished"},
    {SubjectPhase::Failed, "failed"},
};

QString number(int n) {
    return QLocale().toString(n);
}

QString fileNameOf(const QString& path) {
    return QFileInfo(path).fileName();
}

// "reversal, 2 layers x 64"
QString shapeText(const RunSpec& spec) {
    return QString("%1, %2 layers x %3")
        .arg(QString::fromStdString(taskName(spec.task)))
        .arg(spec.model.nLayer)
        .arg(spec.model.nEmbd);
}

QString phaseText(const Subject& s) {
    switch (s.phase) {
        case SubjectPhase::Building:
            return s.origin == SubjectOrigin::Initialized || s.origin == SubjectOrigin::Trained
                       ? QString("building the model")
                       : QString("loading");
        case SubjectPhase::Training:
            return "training";
        case SubjectPhase::Paused:
            return "paused";
        case SubjectPhase::Stopped:
            return "stopped";
        case SubjectPhase::Finished:
            return "finished";
        case SubjectPhase::Failed:
            return "failed";
        case SubjectPhase::Idle:
            break;
    }
    return {};
}

}  // namespace

std::string specKey(const RunSpec& spec) {
    nlohmann::json j = toJson(spec);
    j.erase("preset");
    return j.dump();
}

QString originText(const Subject& s, bool brief) {
    // the line names the path in full; titles and captions only its last part
    const QString name = brief ? fileNameOf(s.path) : s.path;
    switch (s.origin) {
        case SubjectOrigin::None:
            return brief ? QString() : "no model";
        case SubjectOrigin::Initialized:
            return brief ? "at initialization" : "the form's model at initialization";
        case SubjectOrigin::Trained:
            if (brief) {
                return QString("run %1").arg(name);
            }
            if (s.path.isEmpty()) {
                return "a run stopped before it wrote its folder";
            }
            return s.source.isEmpty()
                       ? QString("run %1").arg(fileNameOf(s.path))
                       : QString("run %1, continued from %2").arg(fileNameOf(s.path), s.source);
        case SubjectOrigin::OpenedRun:
            return brief ? QString("run folder %1").arg(name)
                         : QString("run folder %1 (opened)").arg(name);
        case SubjectOrigin::ModelFile:
            return QString("model file %1").arg(name);
        case SubjectOrigin::Checkpoint:
            return QString("checkpoint %1").arg(name);
    }
    return {};
}

QString subjectLine(const Subject& s, int shown, bool formDiffers) {
    if (s.empty()) {
        return "No model: press Initialize or Train, or open a run folder or a model (File menu).";
    }
    QStringList parts = {shapeText(s.spec), originText(s)};
    if (s.origin == SubjectOrigin::ModelFile && s.step < 0) {
        parts << "step unknown (the file does not say)";
    } else if (shown >= 0 && shown != s.step) {
        parts << QString("showing step %1 of the newest %2").arg(number(shown), number(s.step));
    } else if (shown >= 0) {
        parts << QString("step %1").arg(number(shown));
    }
    const QString phase = phaseText(s);
    const bool running = s.phase == SubjectPhase::Training || s.phase == SubjectPhase::Paused;
    if (running && s.liveStep >= 0 && s.liveStep != shown) {
        // the snapshot shown is older than the weights: say where the model is
        parts << QString("%1 at step %2").arg(phase, number(s.liveStep));
    } else if (!phase.isEmpty()) {
        parts << phase;
    }
    QString line = parts.join(" · ");
    if (formDiffers) {
        line += "  (the form has changed since: Initialize or Train builds a new model from it)";
    }
    return line;
}

QString subjectTitle(const Subject& s, int shown) {
    if (s.empty()) {
        return "NoPEScope";
    }
    const QString what =
        s.origin == SubjectOrigin::Initialized ? originText(s, true) : fileNameOf(s.path);
    QString title =
        QString("NoPEScope: %1, %2").arg(QString::fromStdString(taskName(s.spec.task)), what);
    if (shown >= 0 && !(s.origin == SubjectOrigin::ModelFile && s.step < 0)) {
        title += QString(" (step %1)").arg(number(shown));
    }
    return title;
}

QString subjectCaption(const Subject& s, int shown) {
    if (s.empty()) {
        return {};
    }
    QString caption = shapeText(s.spec) + " · " + originText(s, /*brief=*/true);
    if (s.origin == SubjectOrigin::ModelFile && s.step < 0) {
        caption += " · step unknown";
    } else if (shown >= 0) {
        caption += QString(" · step %1").arg(number(shown));
    }
    return caption;
}

QString emptyReason(const Subject& s) {
    switch (s.origin) {
        case SubjectOrigin::None:
            return {};  // each view's own: what appears in it once there is a model
        case SubjectOrigin::Initialized:
        case SubjectOrigin::ModelFile:
        case SubjectOrigin::Checkpoint:
            return "Building and analysing the model...";  // a failure leaves no subject
        case SubjectOrigin::Trained:
            switch (s.phase) {
                case SubjectPhase::Stopped:
                    return "The run stopped before its first snapshot.";
                case SubjectPhase::Failed:
                    return "The run failed before its first snapshot\n(the message above says "
                           "why).";
                default:
                    return "Training is starting: the model\nat initialization appears here "
                           "first.";
            }
        case SubjectOrigin::OpenedRun:
            return "This run folder has no readable snapshot yet:\nnew ones appear as its run "
                   "writes them.";
    }
    return {};
}

QString stageLabel(const Subject& s, int step) {
    if (s.origin == SubjectOrigin::ModelFile) {
        return s.step < 0 ? QString("model (step unknown)") : QString("model (step %1)").arg(step);
    }
    return step == 0 ? QString("init") : QString("step %1").arg(step);
}

QByteArray subjectJson(const Subject& s, int shown) {
    nlohmann::json j;
    j["origin"] = nameOf(kOrigins, s.origin);
    j["phase"] = nameOf(kPhases, s.phase);
    if (!s.empty()) {
        j["task"] = taskName(s.spec.task);
        j["layers"] = s.spec.model.nLayer;
        j["dim"] = s.spec.model.nEmbd;
        j["heads"] = s.spec.model.nHead;
        j["newest_step"] = s.step >= 0 ? nlohmann::json(s.step) : nlohmann::json();
        if (s.liveStep >= 0) {
            j["model_step"] = s.liveStep;  // a run's weights, past its newest snapshot
        }
        j["shown_step"] = shown >= 0 && !(s.origin == SubjectOrigin::ModelFile && s.step < 0)
                              ? nlohmann::json(shown)
                              : nlohmann::json();
    }
    if (!s.path.isEmpty()) {
        j["path"] = s.path.toStdString();
    }
    if (!s.source.isEmpty()) {
        j["continued_from"] = s.source.toStdString();
    }
    j["line"] = subjectLine(s, shown, false).toStdString();
    return QByteArray::fromStdString(j.dump(2) + "\n");
}

}  // namespace nope::gui
