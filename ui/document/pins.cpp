#include "document/pins.h"

#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

#include <nlohmann/json.hpp>

#include "document/modelimport.h"
#include "estimate/estimate.h"
#include "io/files.h"
#include "plan/planio.h"

namespace envelope::ui {

QString pinsPathFor(const QString& planPath)
{
    const QFileInfo info(planPath);
    return info.path() + QLatin1Char('/') + info.completeBaseName() + QStringLiteral(".pins.json");
}

bool savePins(const QString& path, const std::vector<PinnedPlan>& pins, QString* error)
{
    if (pins.empty()) {
        if (QFile::exists(path) && !QFile::remove(path)) {
            if (error)
                *error = QObject::tr("Could not remove %1").arg(path);
            return false;
        }
        return true;
    }
    nlohmann::ordered_json j;
    j["format"] = "envelope.pins";
    j["version"] = 1;
    j["pins"] = nlohmann::ordered_json::array();
    for (const PinnedPlan& pin : pins)
        j["pins"].push_back({ { "label", pin.label.toStdString() },
            { "plan", nlohmann::ordered_json::parse(writePlan(pin.plan)) } });
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) {
        if (error)
            *error = file.errorString();
        return false;
    }
    file.write(QByteArray::fromStdString(j.dump(2) + "\n"));
    if (!file.commit()) {
        if (error)
            *error = file.errorString();
        return false;
    }
    return true;
}

std::vector<PinnedPlan> loadPins(const QString& path, const PresetLibrary& presets, QString* error)
{
    std::vector<PinnedPlan> pins;
    if (!QFile::exists(path))
        return pins;
    const Expected<std::string> text = io::readTextFile(path.toStdString());
    const auto fail = [&](const QString& message) {
        if (error)
            *error = QStringLiteral("%1: %2").arg(path, message);
        return std::vector<PinnedPlan> {};
    };
    if (!text)
        return fail(QString::fromStdString(text.error().toString()));
    const nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || j.value("format", "") != "envelope.pins"
        || !j.contains("pins") || !j["pins"].is_array())
        return fail(QObject::tr("not an envelope.pins file"));
    if (!j["version"].is_number_integer() || j["version"].get<int>() != 1)
        return fail(QObject::tr("version: this Envelope reads pins version 1"));
    ReadOptions options;
    options.readFile = io::readTextFile;
    options.readHub = hubCacheReader();
    options.baseDir = QFileInfo(path).absolutePath().toStdString();
    for (std::size_t i = 0; i < j["pins"].size(); ++i) {
        const nlohmann::json& entry = j["pins"][i];
        if (!entry.is_object() || !entry.contains("plan"))
            return fail(QStringLiteral("pins[%1]: must be {\"label\", \"plan\"}").arg(i));
        Expected<Plan> plan = readPlan(entry["plan"].dump(), presets, options);
        if (!plan)
            return fail(QStringLiteral("pins[%1].plan.%2")
                            .arg(i)
                            .arg(QString::fromStdString(plan.error().toString())));
        PinnedPlan pin;
        pin.label = QString::fromStdString(
            entry.value("label", plan->name.empty() ? std::string("pinned") : plan->name));
        pin.plan = *plan;
        pin.estimate = estimate(pin.plan);
        pins.push_back(std::move(pin));
    }
    return pins;
}

} // namespace envelope::ui
