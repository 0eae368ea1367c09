"""Static files in production: hashed names for caching, also inside ES module imports."""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticFilesStorage(CompressedManifestStaticFilesStorage):
    # The room page is small ES modules importing each other; rewrite those imports to the
    # hashed names too, so browsers never mix an old module with a new one.
    support_js_module_import_aggregation = True
