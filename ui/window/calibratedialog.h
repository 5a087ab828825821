// Tools → Calibrate from a measured run…: the GUI face of `envelope-cli calibrate`. The user
// gives the measured peak memory per GPU (GiB) and which metric it is, and optionally the
// measured tokens/s or step time; the core's calibrate() (estimate/calibrate.h) fits the plan
// and the dialog shows what it changes and by how much. OK applies the fitted plan as one undo
// step. The dialog only parses and displays: every figure comes from the core.
#pragma once

#include <QDialog>

#include <optional>

#include "estimate/calibrate.h"

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;

namespace envelope::ui {

class PlanDocument;

class CalibrateDialog : public QDialog {
    Q_OBJECT
public:
    explicit CalibrateDialog(PlanDocument* document, QWidget* parent = nullptr);

    // The fit of the current inputs; empty while an input is missing or bad (message() says
    // which field and its allowed range).
    const std::optional<Calibration>& calibration() const { return m_calibration; }
    QString message() const { return m_message; }

    void accept() override; // applies the fitted plan to the document as one undo step

private:
    void update();
    // The inputs as the core's target; empty with m_message set when one is bad.
    std::optional<CalibrationTarget> target();

    PlanDocument* m_document;
    QLineEdit* m_peak;
    QComboBox* m_metric;
    QComboBox* m_rateKind;
    QLineEdit* m_rate;
    QLabel* m_preview;
    QDialogButtonBox* m_buttons;
    std::optional<Calibration> m_calibration;
    QString m_message;
};

} // namespace envelope::ui
