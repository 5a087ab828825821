// Workload group of the Serving tab (issue 27): the requests the deployment serves (a request
// rate or a closed loop of users, prompt and output lengths as mean and p90) and the latency
// objectives (p90 TTFT and TPOT). Every change is one undoable PlanDocument edit of
// serving.workload / serving.slo; a histogram read from a plan file is shown, not edited.
#pragma once

#include "controls/plancontrolgroup.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;

namespace envelope::ui {

class SliderSpin;

// Merge ids (after the serving controls').
enum WorkloadControlId {
    kWorkloadRateControl = 120,
    kWorkloadUsersControl,
    kWorkloadInputMeanControl,
    kWorkloadInputP90Control,
    kWorkloadOutputMeanControl,
    kWorkloadOutputP90Control,
    kSloTtftControl,
    kSloTpotControl,
};

class WorkloadControls : public PlanControlGroup {
    Q_OBJECT
public:
    explicit WorkloadControls(PlanDocument* document, QWidget* parent = nullptr);

    QCheckBox* enabledBox() const { return m_enabled; }
    QComboBox* arrivalCombo() const { return m_arrival; }
    SliderSpin* rateControl() const { return m_rate; }
    QSpinBox* usersControl() const { return m_users; }
    QSpinBox* inputMean() const { return m_inMean; }
    QSpinBox* inputP90() const { return m_inP90; }
    QSpinBox* outputMean() const { return m_outMean; }
    QSpinBox* outputP90() const { return m_outP90; }
    QDoubleSpinBox* ttftLimit() const { return m_ttft; } // ms, 0 = none
    QDoubleSpinBox* tpotLimit() const { return m_tpot; } // ms, 0 = none

    // The workload "Serve a workload" switches on: 1,000-token prompts (p90 1,800) and 300-token
    // answers (p90 550), cut to fit the context, at one request per second.
    static ServingWorkload defaultWorkload(int context);

protected:
    void refresh() override;

private:
    QSpinBox* lengthSpin(const QString& label, const QString& tip, int mergeId, bool input, bool p90);
    QDoubleSpinBox* limitSpin(const QString& label, const QString& tip, int mergeId, bool ttft);

    QCheckBox* m_enabled;
    QComboBox* m_arrival;
    SliderSpin* m_rate;
    QSpinBox* m_users;
    QSpinBox* m_inMean;
    QSpinBox* m_inP90;
    QSpinBox* m_outMean;
    QSpinBox* m_outP90;
    QLabel* m_lengthNote;
    QDoubleSpinBox* m_ttft;
    QDoubleSpinBox* m_tpot;
};

} // namespace envelope::ui
