# An open roll keeps what its table's system marks on it in one neutral column (``marks``), and
# what it is about under a neutral name (``subject``): the dice committed to a Zoria botch move
# into ``marks``, the insight subject is renamed. The systems' own tables (a seat's pool facts,
# extended actions) keep their tables: only the module that declares them moved.

from django.db import migrations, models


def into_marks(apps, schema_editor):
    OpenRoll = apps.get_model("tabletop", "OpenRoll")
    for roll in OpenRoll.objects.all().only("pk", "botch_dice"):
        OpenRoll.objects.filter(pk=roll.pk).update(marks={"botch_dice": roll.botch_dice})


def out_of_marks(apps, schema_editor):
    OpenRoll = apps.get_model("tabletop", "OpenRoll")
    for roll in OpenRoll.objects.all().only("pk", "marks"):
        count = int((roll.marks or {}).get("botch_dice", 0))
        OpenRoll.objects.filter(pk=roll.pk).update(botch_dice=count)


class Migration(migrations.Migration):
    dependencies = [
        ("tabletop", "0011_verbose_names"),
    ]

    operations = [
        migrations.AddField(
            model_name="openroll",
            name="marks",
            field=models.JSONField(default=dict),
        ),
        migrations.RunPython(into_marks, out_of_marks),
        migrations.RemoveConstraint(
            model_name="openroll",
            name="committed_dice_not_negative",
        ),
        migrations.AddConstraint(
            model_name="openroll",
            constraint=models.CheckConstraint(
                condition=models.Q(critical_dice__gte=0), name="critical_dice_not_negative"
            ),
        ),
        migrations.RemoveField(
            model_name="openroll",
            name="botch_dice",
        ),
        migrations.RenameField(
            model_name="openroll",
            old_name="insight_subject",
            new_name="subject",
        ),
    ]
