"""Write ``nstviz/schema/report.schema.json`` from the dataclasses (``python -m nstviz.schema``)."""

from nstviz.schema import SCHEMA_PATH, schema_text

SCHEMA_PATH.write_text(schema_text(), encoding="utf-8")
print(SCHEMA_PATH)
