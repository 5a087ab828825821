// Asks for the pixel size of an exported image.
#pragma once

#include <QDialog>

class QSpinBox;

namespace envelope::ui {

class ExportSizeDialog : public QDialog {
    Q_OBJECT
public:
    explicit ExportSizeDialog(const QSize& initial, QWidget* parent = nullptr);
    QSize chosenSize() const;

private:
    QSpinBox* m_width;
    QSpinBox* m_height;
};

} // namespace envelope::ui
