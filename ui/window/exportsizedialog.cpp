#include "window/exportsizedialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QSpinBox>

namespace envelope::ui {

ExportSizeDialog::ExportSizeDialog(const QSize& initial, QWidget* parent)
    : QDialog(parent)
    , m_width(new QSpinBox(this))
    , m_height(new QSpinBox(this))
{
    setWindowTitle(tr("Image size"));
    for (QSpinBox* spin : { m_width, m_height }) {
        spin->setRange(64, 16384);
        spin->setSuffix(tr(" px"));
    }
    m_width->setValue(initial.width());
    m_height->setValue(initial.height());
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    auto* form = new QFormLayout(this);
    form->addRow(tr("&Width:"), m_width);
    form->addRow(tr("&Height:"), m_height);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

QSize ExportSizeDialog::chosenSize() const
{
    return { m_width->value(), m_height->value() };
}

} // namespace envelope::ui
