"""One settings module, driven by the environment.

With nothing set, the table runs on an SQLite file and an in-memory channel layer. Set
``DATABASE_URL`` for PostgreSQL, ``REDIS_URL`` for Redis, and ``TABLETOP_ENV=production`` for a
hardened deployment (then ``SECRET_KEY`` and ``ALLOWED_HOSTS`` are required).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("TABLETOP_DATA_DIR", BASE_DIR / "var"))

ENV = os.environ.get("TABLETOP_ENV", "development").strip().lower()
if ENV not in {"development", "production"}:
    raise ImproperlyConfigured(f"TABLETOP_ENV must be 'development' or 'production', not {ENV!r}")
PRODUCTION = ENV == "production"


def _required(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise ImproperlyConfigured(f"{name} must be set when TABLETOP_ENV=production")
    return value


def _list(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


if PRODUCTION:
    SECRET_KEY = _required("SECRET_KEY")
    ALLOWED_HOSTS = _list(_required("ALLOWED_HOSTS"))
    DEBUG = False
else:
    SECRET_KEY = os.environ.get(
        "SECRET_KEY", "development-only-key-not-for-production-0123456789-abcdefghijklmnop"
    )
    ALLOWED_HOSTS = _list(os.environ.get("ALLOWED_HOSTS", "")) or [
        "127.0.0.1",
        "localhost",
        "[::1]",
        "testserver",
    ]
    DEBUG = os.environ.get("DEBUG", "1") not in {"0", "false", "False", "no"}

CSRF_TRUSTED_ORIGINS = _list(os.environ.get("CSRF_TRUSTED_ORIGINS", ""))

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "channels",
    "rules",
    "tabletop",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "tabletop.headers.SecurityHeadersMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "tabletop.outage.DatabaseOutageMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The page's language: the switch's cookie, else the browser's Accept-Language.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "tabletop.urls"
# A post without its CSRF token is told so in JSON when it sent or asks for JSON.
CSRF_FAILURE_VIEW = "tabletop.views.answers.no_csrf_token"
ASGI_APPLICATION = "tabletop.asgi.application"
WSGI_APPLICATION = "tabletop.wsgi.application"

TEMPLATES: list[dict[str, Any]] = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "tabletop.language.browser_catalog",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
DATABASE_URL = os.environ.get("DATABASE_URL", "").strip()
if DATABASE_URL:
    DATABASES = {
        "default": dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)
    }
    # Named explicitly (Django's own default) so processes serving live-server tests, which
    # derive the test database's name from this, find the same database.
    if DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3":
        DATABASES["default"]["TEST"] = {"NAME": f"test_{DATABASES['default']['NAME']}"}
    # PostgreSQL connections come from a pool per process (psycopg_pool), checked when taken.
    # Under ASGI every page request runs in a thread of its own; with kept connections each of
    # those threads opened one and left it to the garbage collector, and seating 2,000 players
    # ran a 100-connection server out of connections (docs/benchmarks.md). A pool bounds them
    # per process and reuses them. TABLETOP_DB_POOL=0 turns it off.
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and os.environ.get(
        "TABLETOP_DB_POOL", "1"
    ) not in {"0", "false", "no"}:
        # (checked when taken: without a round trip while its server has said nothing,
        # tabletop/db_pool.py)
        DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps them instead
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": int(os.environ.get("TABLETOP_DB_POOL_MIN", "2")),
            "max_size": int(os.environ.get("TABLETOP_DB_POOL_MAX", "8")),
            # A request waits this long for a free connection before it is answered 503
            # (while the database is away, only the first one waits: tabletop/outage.py).
            "timeout": float(os.environ.get("TABLETOP_DB_POOL_TIMEOUT", "1.5")),
        }
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        DATABASES["default"].setdefault("OPTIONS", {}).update(
            {
                # A database host that does not answer at all is given up on after this long.
                "connect_timeout": int(os.environ.get("TABLETOP_DB_CONNECT_TIMEOUT", "2")),
                # No statement holds a connection (and the thread serving the sockets) longer.
                "options": "-c statement_timeout="
                + os.environ.get("TABLETOP_DB_STATEMENT_TIMEOUT_MS", "15000"),
            }
        )
else:
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(DATA_DIR / "db.sqlite3"),
            # Keep the ORM thread's connection: opening SQLite (and setting WAL) per call costs
            # more than the roll itself.
            "CONN_MAX_AGE": 600,
            # Live-server tests run the app in another process, so the test database is a file.
            "TEST": {"NAME": str(DATA_DIR / "test.sqlite3")},
        }
    }
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # One writer at a time: take the write lock at BEGIN so concurrent spends queue, not fail.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Channel layer --------------------------------------------------------------------------
REDIS_URL = os.environ.get("REDIS_URL", "").strip()
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL]},
        }
    }
else:
    # Each room takes one channel per process (tabletop/hub.py); a socket's own channel only
    # carries what it must put in order, so room to queue is cheap insurance.
    CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels.layers.InMemoryChannelLayer", "CONFIG": {"capacity": 1000}}
    }

# --- Auth, i18n, static ---------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

LANGUAGE_CODE = "en"
# The languages the table speaks (the switch in every page names each in its own words).
LANGUAGES = [("en", "English"), ("de", "German")]
# The catalogues (compiled .mo files are kept beside their .po files: see docs/translations.md).
LOCALE_PATHS = [BASE_DIR / "tabletop" / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "tabletop.storage.StaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
# In development whitenoise serves straight from the source folders, no collectstatic needed.
WHITENOISE_USE_FINDERS = not PRODUCTION
WHITENOISE_AUTOREFRESH = not PRODUCTION

# --- The table ------------------------------------------------------------------------------
# Each value's type is the one its line converts to; readers take them as such.
TABLETOP: dict[str, Any] = {
    # Socket messages per seat: a sustained rate and a burst (docs/protocol.md, "Promises": an
    # honest client may send 20 a second, in bursts of 40).
    "RATE_PER_SECOND": float(os.environ.get("TABLETOP_RATE_PER_SECOND", "25")),
    "RATE_BURST": int(os.environ.get("TABLETOP_RATE_BURST", "50")),
    "MAX_MESSAGE_BYTES": int(os.environ.get("TABLETOP_MAX_MESSAGE_BYTES", "16384")),
    # An action that waited this long for the process's ORM thread is refused (`busy`) instead
    # of done late: an overloaded table sheds work rather than queueing without end, while a
    # whole table rolling at once (200 players: ~2 s on two processes) still goes through.
    # Under the room page's 8 s "no answer" so the page hears the refusal.
    "ACTION_DEADLINE_SECONDS": float(os.environ.get("TABLETOP_ACTION_DEADLINE_SECONDS", "5")),
    # On PostgreSQL, the roll's own statements are prepared once per connection
    # (tabletop/services/round_trips.py). Off (0) behind a pooler that hands a connection's
    # transactions to other server sessions (PgBouncer in transaction mode), where a statement
    # prepared in one session is not in the next.
    "DB_PREPARED": os.environ.get("TABLETOP_DB_PREPARED", "1").strip().lower()
    not in {"0", "false", "no"},
    # Socket actions of seats asking often on the database thread at once (tabletop/turns.py):
    # the rest wait in the event loop and the seat that has asked least lately goes next (a
    # seat's first ask in a second or two never waits). A bystander waits behind at most this
    # many; more keeps the thread busy while the event loop is (docs/benchmarks.md).
    "ACTIONS_IN_FLIGHT": int(os.environ.get("TABLETOP_ACTIONS_IN_FLIGHT", "4")),
    "SEAT_COOKIE": "tabletop_seat",
    # Work budgets, in bytes of the events made (a roll weighs what its dice cost): per seat
    # and per room, a sustained rate and a burst. A 3d6 weighs ~300 bytes; a roll of thousands
    # of dice ~100 KiB or more, so heavy rolls are spaced out and cannot starve other rooms.
    "SEAT_WORK_PER_SECOND": int(os.environ.get("TABLETOP_SEAT_WORK_PER_SECOND", "65536")),
    "SEAT_WORK_BURST": int(os.environ.get("TABLETOP_SEAT_WORK_BURST", str(256 * 1024))),
    "ROOM_WORK_PER_SECOND": int(os.environ.get("TABLETOP_ROOM_WORK_PER_SECOND", "262144")),
    "ROOM_WORK_BURST": int(os.environ.get("TABLETOP_ROOM_WORK_BURST", str(1024 * 1024))),
    # Seats made per client address (a minute's worth, bursts of the same): one person cannot
    # multiply their budgets by taking many seats.
    "JOINS_PER_MINUTE": float(os.environ.get("TABLETOP_JOINS_PER_MINUTE", "10")),
    # Writes from the room's forms per seat (sheets, settings, saved rolls): requests a second
    # and bytes of their bodies a second, each with a burst. A person saves a few times a
    # minute; a 64 KiB sheet may be saved four times at once, then once a second.
    "WRITES_PER_SECOND": float(os.environ.get("TABLETOP_WRITES_PER_SECOND", "2")),
    "WRITES_BURST": int(os.environ.get("TABLETOP_WRITES_BURST", "20")),
    "WRITE_BYTES_PER_SECOND": int(
        os.environ.get("TABLETOP_WRITE_BYTES_PER_SECOND", str(64 * 1024))
    ),
    "WRITE_BYTES_BURST": int(os.environ.get("TABLETOP_WRITE_BYTES_BURST", str(256 * 1024))),
    # Odds: requests per seat (rate, burst), the time one computation may take, how many run
    # at once in the odds workers (separate processes, off the ORM thread) and may wait.
    "ODDS_PER_SECOND": float(os.environ.get("TABLETOP_ODDS_PER_SECOND", "4")),
    "ODDS_BURST": int(os.environ.get("TABLETOP_ODDS_BURST", "20")),
    "ODDS_SECONDS": float(os.environ.get("TABLETOP_ODDS_SECONDS", "2")),
    "ODDS_WORKERS": int(os.environ.get("TABLETOP_ODDS_WORKERS", "1")),
    "ODDS_WAITING": int(os.environ.get("TABLETOP_ODDS_WAITING", "4")),
    # What a socket may have sent but its client not yet read; past it the socket waits, and
    # is closed (code 4408; the client resumes from the store with after=<last seq>) ...
    "SEND_BUFFER_BYTES": int(os.environ.get("TABLETOP_SEND_BUFFER_BYTES", str(4 * 1024 * 1024))),
    # ... once it has stayed past that for this long (a slow reader is waited for that long).
    "SEND_STALL_SECONDS": float(os.environ.get("TABLETOP_SEND_STALL_SECONDS", "5")),
    # Replays of a session's history (a socket opening with after=<seq> far behind) sent at
    # once by a process; the rest wait up to ACTION_DEADLINE_SECONDS, then are told `busy`.
    "REPLAYS_IN_FLIGHT": int(os.environ.get("TABLETOP_REPLAYS_IN_FLIGHT", "4")),
    # Spectator sockets one watch link may hold open on a process.
    "WATCHERS_PER_LINK": int(os.environ.get("TABLETOP_WATCHERS_PER_LINK", "50")),
    # Exports: made at once by a process (the rest wait up to ACTION_DEADLINE_SECONDS, then
    # HTTP 503), and how many a viewer (a seat, or a spectator's address) and a watch link may
    # ask for a minute (bursts of the same).
    # Where ended sessions' records are kept once made (docs/operations.md, "Limits").
    "EXPORT_DIR": Path(os.environ.get("TABLETOP_EXPORT_DIR", DATA_DIR / "exports")),
    "EXPORTS_IN_FLIGHT": int(os.environ.get("TABLETOP_EXPORTS_IN_FLIGHT", "4")),
    "EXPORTS_PER_MINUTE": float(os.environ.get("TABLETOP_EXPORTS_PER_MINUTE", "6")),
    "LINK_EXPORTS_PER_MINUTE": float(os.environ.get("TABLETOP_LINK_EXPORTS_PER_MINUTE", "30")),
    # Dice statistics: seconds of a process's time a viewer (a seat, the GM, or a spectator's
    # address on one watch link) and a watch link (its spectators together) may spend on them a
    # minute (bursts of the same), and how many a process works out at once.
    "STATS_SECONDS_PER_MINUTE": float(os.environ.get("TABLETOP_STATS_SECONDS_PER_MINUTE", "6")),
    "LINK_STATS_SECONDS_PER_MINUTE": float(
        os.environ.get("TABLETOP_LINK_STATS_SECONDS_PER_MINUTE", "20")
    ),
    "STATS_IN_FLIGHT": int(os.environ.get("TABLETOP_STATS_IN_FLIGHT", "2")),
    # How often each process compares its rooms with the store (events lost by the channel
    # layer, e.g. during a Redis outage, reach sockets within about twice this).
    "STORE_WATCH_SECONDS": float(os.environ.get("TABLETOP_STORE_WATCH_SECONDS", "1")),
    # A serving process on SQLite copies the write-ahead log back into the database every this
    # many seconds, on a thread of its own, not in whichever roll's commit finds the log long
    # (tabletop/sqlite_checkpoints.py); 0: SQLite's own checkpoints in the commits.
    "WAL_CHECKPOINT_SECONDS": float(os.environ.get("TABLETOP_WAL_CHECKPOINT_SECONDS", "1")),
    # How long a socket's connect waits for its room's subscription before going ahead.
    "LAYER_WAIT_SECONDS": float(os.environ.get("TABLETOP_LAYER_WAIT_SECONDS", "1")),
    # The serving process sets aside what it made while loading before it serves (tabletop/asgi.py):
    # a full garbage collection, which stops the event loop, then walks only the live rooms.
    "GC_FREEZE": os.environ.get("TABLETOP_GC_FREEZE", "1") not in {"0", "false", "no"},
    # The young generation is collected after this many allocations (Python's default: 700).
    "GC_THRESHOLD": int(os.environ.get("TABLETOP_GC_THRESHOLD", "10000")),
    # Outgoing webhooks (docs/operations.md): the wall-clock limit of one POST, everything
    # included; sender threads per process; deliveries a hook may have waiting; how old an
    # event may be and still be posted; the waits before each retry.
    "WEBHOOK_SECONDS": float(os.environ.get("TABLETOP_WEBHOOK_SECONDS", "10")),
    "WEBHOOK_SENDERS": int(os.environ.get("TABLETOP_WEBHOOK_SENDERS", "4")),
    "WEBHOOK_PENDING": int(os.environ.get("TABLETOP_WEBHOOK_PENDING", "100")),
    "WEBHOOK_MAX_AGE_SECONDS": float(os.environ.get("TABLETOP_WEBHOOK_MAX_AGE_SECONDS", "3600")),
    "WEBHOOK_RETRY_SECONDS": [
        float(wait)
        for wait in _list(os.environ.get("TABLETOP_WEBHOOK_RETRY_SECONDS", "2,10,60,300,1800"))
    ],
    # Whether hooks may post to loopback and private networks: only in development, where it is
    # the default (a GM trying a receiver on their own machine). Never in production.
    "WEBHOOK_PRIVATE_ADDRESSES": not PRODUCTION
    and os.environ.get("TABLETOP_WEBHOOK_PRIVATE_ADDRESSES", "1" if DEBUG else "0")
    not in {"0", "false", "no"},
    # Which sites may show the stream overlay in a frame (a CSP frame-ancestors value): any,
    # by default (it is read-only); "'none'" to allow none, or a list of origins.
    "OVERLAY_FRAME_ANCESTORS": os.environ.get("TABLETOP_OVERLAY_FRAME_ANCESTORS", "*").strip()
    or "'none'",
}
if PRODUCTION and os.environ.get("TABLETOP_WEBHOOK_PRIVATE_ADDRESSES", "0") not in {
    "0",
    "false",
    "no",
}:
    raise ImproperlyConfigured(
        "TABLETOP_WEBHOOK_PRIVATE_ADDRESSES cannot be set when TABLETOP_ENV=production: a hook "
        "could reach the server's own network"
    )

# --- Security -------------------------------------------------------------------------------
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
if PRODUCTION:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = os.environ.get("SECURE_SSL_REDIRECT", "1") != "0"
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True

# Error reports (the debug page, error mails) show the request and the traceback's variables
# with seat tokens hidden.
DEFAULT_EXCEPTION_REPORTER = "tabletop.access_log.RedactingExceptionReporter"
DEFAULT_EXCEPTION_REPORTER_FILTER = "tabletop.access_log.RedactingReporterFilter"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}
