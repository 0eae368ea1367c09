"""What the dead-code check (``vulture``, run by ``.ci/run``) must not call dead: names the
frameworks reach by convention, and the seams the tests hold the code to. Everything else that
nothing uses is dead and goes. Django's declarative names (``Meta``, admin options, command
hooks) are ignored by name in pyproject.toml's ``[tool.vulture]``."""

# ruff: noqa: B018, F821
# (each line names an attribute so the checker counts it as used; ``_`` stands for any object)

# Django: app configs, admin classes, URL map, the static files storage, model fields the ORM
# reads and writes by keyword, a signal receiver, settings Django reads.
RulesConfig
TabletopConfig
CampaignAdmin
CharacterAdmin
GameSessionAdmin
EventAdmin
urlpatterns
handler404  # tabletop/urls.py; its view and CSRF_FAILURE_VIEW's are named by their paths
no_such_address
no_csrf_token
_.regex  # CodeConverter (tabletop/url_codes.py): a path converter's regex
_.prepare_value  # StorableJSONField (tabletop/admin.py): how a form field shows its value back
_.formfield_overrides  # OwnCampaignsMixin: the admin's form fields for its JSON
StaticFilesStorage
_.support_js_module_import_aggregation
_.is_staff  # the demo GM may open the admin
_.is_active  # WatchLink.is_active, read by the dashboard's template
_.starting_dice  # SeatPoolState (zoria: filter(starting_dice__gt=0))
_.touched  # SeatPoolState (zoria: update(touched=True))
_.insight_subject  # OpenRoll
_.opened_seq  # ExtendedAction (ordering)
_.position  # SavedRoll (ordering)
_.created_by  # WatchLink
_.lease_owner  # Webhook (webhooks/sender.py: filter and update by keyword)
_.lease_until  # Webhook
_.last_error  # WebhookDelivery
_.response_status  # WebhookDelivery
_.next_attempt_at  # WebhookDelivery
_.updated_at  # WebhookDelivery
_event_stored  # a post_save receiver
_hook_saved  # a post_save receiver
_check_quietly  # a connection_created receiver
browser_catalog  # a template context processor, named in settings.TEMPLATES
TEXTS  # tabletop/systems/texts.py: read by makemessages, not by code
RedactingExceptionReporter  # settings.DEFAULT_EXCEPTION_REPORTER
RedactingReporterFilter  # settings.DEFAULT_EXCEPTION_REPORTER_FILTER
_.hidden_settings  # read by Django's SafeExceptionReporterFilter

# Channels: consumer hooks and handlers it calls by message type.
_.channel_layer_alias
_.disconnect
_.watch_revoked
_.resolve_scope  # AuthMiddleware's hook (tabletop/adapters.py checks it is still called)

# Twisted: an attribute set for the protocol to read (tabletop/adapters.py).
_.failByDrop

# The standard library calls them: HTMLParser (bench/scenarios/page.py); http.client and io
# reading a webhook's answer (webhooks/post.py).
_.handle_starttag
_.makefile
_.readable
_.readinto

# Seams the tests hold the code to.
daphne_servers  # bench/harness.py: the one server harness, shared with the tests
_.exhausted  # ScriptedSource: every scripted die was drawn
regions  # protocol/docs.py: reads the generated tables back out of docs/protocol.md
check_event  # protocol/events.py: every event the suite stores is checked against the catalogue
apply_event  # selectors/room.py: the room reducer static/tabletop/state.js is tested to agree with
_.wait_idle  # webhooks/sender.py: the sender has delivered what it was given

# Django's middleware protocol: it reads these from a middleware class (tabletop/outage.py).
_.sync_capable
_.async_capable
_.process_exception
_.process_response
_.xframe_options_exempt  # django.middleware.clickjacking reads it from a view
# Named in settings.MIDDLEWARE (settings are not scanned).
SecurityHeadersMiddleware
DatabaseOutageMiddleware
# autobahn reads it: how long a closing socket may take to read up to its close frame.
_.closeHandshakeTimeout
# psycopg reads it: the connection sends no BEGIN of its own (services/round_trips.py).
_.autocommit
# autobahn calls them: a frame's masker and the module's UTF-8 validator (tabletop/adapters.py).
_.pointer
_.Utf8Validator
