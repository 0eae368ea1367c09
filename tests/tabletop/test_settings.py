"""Settings come from the environment; production mode is hardened."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRINT = (
    "import django, json; django.setup(); from django.conf import settings as s; "
    "print(json.dumps({'engine': s.DATABASES['default']['ENGINE'], 'db': s.DATABASES['default'],"
    " 'layer': s.CHANNEL_LAYERS['default'], 'debug': s.DEBUG,"
    " 'hosts': s.ALLOWED_HOSTS, 'tabletop': s.TABLETOP}, default=str))"
)


def settings_with(env: dict[str, str]) -> dict:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "TABLETOP_ENV"}
    }
    clean |= {
        "DJANGO_SETTINGS_MODULE": "tabletop.settings",
        "TABLETOP_DATA_DIR": str(ROOT / "var"),
    } | env
    out = subprocess.run(
        [sys.executable, "-c", PRINT], cwd=ROOT, env=clean, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_defaults_are_sqlite_wal_immediate_and_in_memory_layer():
    s = settings_with({})
    assert s["engine"] == "django.db.backends.sqlite3"
    assert s["db"]["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert s["db"]["OPTIONS"]["timeout"] == 20
    assert "journal_mode=WAL" in s["db"]["OPTIONS"]["init_command"]
    assert s["layer"]["BACKEND"] == "channels.layers.InMemoryChannelLayer"
    assert s["layer"]["CONFIG"]["capacity"] == 1000
    assert s["debug"] is True


def test_database_url_selects_postgres():
    s = settings_with({"DATABASE_URL": "postgres://postgres@127.0.0.1:5432/test"})
    assert s["engine"] == "django.db.backends.postgresql"
    assert (s["db"]["NAME"], s["db"]["HOST"], s["db"]["PORT"]) == ("test", "127.0.0.1", 5432)


def test_redis_url_selects_the_pubsub_layer():
    s = settings_with({"REDIS_URL": "redis://127.0.0.1:6379/0"})
    assert s["layer"] == {
        "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
        "CONFIG": {"hosts": ["redis://127.0.0.1:6379/0"]},
    }


PRODUCTION = {
    "TABLETOP_ENV": "production",
    "SECRET_KEY": "k3!Vq9#zR@x2$Lm8^Tw4&Np6*Yb1(Hc7)Jd5_Fg0+Se-Ua" * 2,
    "ALLOWED_HOSTS": "dice.example.org",
}


def test_production_requires_secret_key_and_hosts():
    for missing in ("SECRET_KEY", "ALLOWED_HOSTS"):
        env = {k: v for k, v in PRODUCTION.items() if k != missing}
        clean = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "ALLOWED_HOSTS"}}
        out = subprocess.run(
            [sys.executable, "-c", PRINT],
            cwd=ROOT,
            env=clean | env | {"DJANGO_SETTINGS_MODULE": "tabletop.settings"},
            capture_output=True,
            text=True,
        )
        assert out.returncode != 0
        assert f"{missing} must be set" in out.stderr


def test_webhooks_reach_private_networks_only_in_development():
    assert settings_with(PRODUCTION)["tabletop"]["WEBHOOK_PRIVATE_ADDRESSES"] is False
    clean = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    out = subprocess.run(
        [sys.executable, "-c", PRINT],
        cwd=ROOT,
        env=clean
        | PRODUCTION
        | {
            "DJANGO_SETTINGS_MODULE": "tabletop.settings",
            "TABLETOP_WEBHOOK_PRIVATE_ADDRESSES": "1",
        },
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0
    assert "TABLETOP_WEBHOOK_PRIVATE_ADDRESSES cannot be set" in out.stderr


def test_check_deploy_is_clean_in_production():
    env = {
        k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}
    } | PRODUCTION
    out = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no issues" in out.stdout


def test_production_static_files_are_hashed_inside_module_imports(tmp_path):
    env = {
        k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}
    } | PRODUCTION
    env["STATIC_ROOT"] = str(tmp_path)
    out = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    room = next(tmp_path.glob("tabletop/room.*.js"))
    imports = [line for line in room.read_text().splitlines() if line.startswith("import ")]
    assert imports and all(".js" in line for line in imports)
    import re

    assert all(re.search(r'\./\w+\.[0-9a-f]{12}\.js"', line) for line in imports), imports
    assert list(tmp_path.glob("tabletop/room.*.js.gz"))
