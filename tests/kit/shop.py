"""The example product (examples/shop) as its team runs it: the engine built
into a wheel, installed into a virtualenv of its own, the shop's web server and
Celery worker started from that virtualenv on the shop's own SQLite database and
a real Redis broker. Nothing of the repository is on their path but the shop."""

import os
import shutil
import socket
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import requests

from tests.workers import stop_process_group, wait_for_log, wait_until

REPOSITORY = Path(__file__).resolve().parent.parent.parent
SHOP = REPOSITORY / "examples" / "shop"
# What the wheel is built from: the engine's packages and its metadata, nothing else.
DISTRIBUTED = ["pyproject.toml", "README.md", "assistant", "assistant_engine", "conversations", "credits"]
# The only top-level names the engine may add to a product's virtualenv.
ENGINE_TOP_LEVEL = {"assistant", "assistant_engine", "conversations", "credits"}
PASSWORD = "shop-pass"


def build_wheel(folder: Path) -> Path:
    """The engine's wheel, built from a clean copy of what it distributes (no
    stale build/ folder can slip an old module in)."""
    source = folder / "source"
    source.mkdir()
    for name in DISTRIBUTED:
        origin = REPOSITORY / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy(origin, source / name)
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--disable-pip-version-check",
         "-w", str(folder / "dist"), str(source)])
    [wheel] = (folder / "dist").glob("assistant_engine-*.whl")
    return wheel


def fresh_virtualenv(folder: Path, wheel: Path, interpreter: str = sys.executable) -> Path:
    """A new virtualenv with the wheel installed as a product would (its
    dependencies from the package index); returns its python."""
    run([interpreter, "-m", "venv", str(folder / "venv")])
    python = folder / "venv" / "bin" / "python"
    run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)])
    return python


def interpreter(version: str) -> str | None:
    """This machine's python of that version (on the PATH, or pyenv's), one that runs."""
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    candidates = [shutil.which(f"python{version}"), *sorted(pyenv.glob(f"{version}.*/bin/python{version}"))]
    for candidate in filter(None, candidates):
        # pyenv's shims are on the PATH even for a version that isn't selected: they fail.
        if subprocess.run([str(candidate), "--version"], capture_output=True).returncode == 0:
            return str(candidate)
    return None


def installed_top_level_names(python: Path) -> set[str]:
    listing = run([str(python), "-c", (
        "from importlib.metadata import distribution\n"
        "files = distribution('assistant-engine').files\n"
        "print('\\n'.join(sorted({f.parts[0] for f in files if not f.parts[0].endswith('.dist-info')})))")],
        cwd=python.parent)  # not the repository's folder: its egg-info would answer
    return set(listing.split())


def run(command: list[str], **kwargs) -> str:
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{command}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Shop:
    python: Path
    env: dict
    url: str
    database: Path

    def manage(self, *args: str, **env: str) -> str:
        return run([str(self.python), "manage.py", *args], cwd=SHOP, env={**self.env, **env})

    def organization_slug(self, tenant: str) -> str:
        with sqlite3.connect(self.database) as connection:
            [slug] = connection.execute("SELECT slug FROM assistant_organizations_organization WHERE tenant_key = ?",
                                        (tenant,)).fetchone()
        return slug

    def staff_accesses(self) -> list[tuple[str, str]]:
        with sqlite3.connect(self.database) as connection:
            return connection.execute(
                "SELECT kind, object_id FROM assistant_organizations_staffaccess ORDER BY id").fetchall()

    def admin_session(self, email: str) -> requests.Session:
        """A superuser of the shop, signed in to its admin."""
        self.manage("createsuperuser", "--noinput", "--email", email, DJANGO_SUPERUSER_PASSWORD=PASSWORD)
        session = requests.Session()
        session.get(f"{self.url}/admin/login/").raise_for_status()
        answer = session.post(f"{self.url}/admin/login/", allow_redirects=False, data={
            "username": email, "password": PASSWORD, "csrfmiddlewaretoken": session.cookies["csrftoken"],
            "next": "/admin/"})
        assert answer.status_code == 302, answer.text[-2000:]
        return session

    def order(self, number: int) -> tuple[str, int]:
        with sqlite3.connect(self.database) as connection:
            return connection.execute("SELECT status, changes FROM orders_order WHERE number = ?",
                                      (number,)).fetchone()

    def signed_in(self, email: str) -> requests.Session:
        """A session signed in through the shop's own sign-in page."""
        session = requests.Session()
        session.get(f"{self.url}/sign-in/").raise_for_status()
        token = session.cookies["csrftoken"]
        answer = session.post(f"{self.url}/sign-in/", data={"email": email, "password": PASSWORD,
                                                             "csrfmiddlewaretoken": token}, allow_redirects=False)
        assert answer.status_code == 302, answer.text
        session.headers["X-CSRFToken"] = session.cookies["csrftoken"]
        return session


def shop_environment(folder: Path, broker_url: str, model_url: str) -> dict:
    """Only what the shop's team would set: none of the repository's variables."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(folder),
        "LANG": "C.UTF-8",
        "PYTHONUNBUFFERED": "1",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SHOP_DATABASE": str(folder / "shop.sqlite3"),
        "SHOP_BROKER_URL": broker_url,
        "ASSISTANT_MODEL": "infomaniak-qwen3",
        "INFOMANIAK_AI_TOKEN": "shop-test-token",
        "INFOMANIAK_AI_PRODUCT_ID": "4242",
        "INFOMANIAK_AI_BASE_URL": model_url,
    }


def start(command: list[str], env: dict, log_path: Path) -> subprocess.Popen:
    with open(log_path, "wb") as log:
        return subprocess.Popen(command, cwd=SHOP, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)


def serve_shop(python: Path, env: dict, folder: Path):
    """The shop's web server and worker; yields the Shop, stops both."""
    port = free_port()
    shop = Shop(python=python, env=env, url=f"http://127.0.0.1:{port}", database=Path(env["SHOP_DATABASE"]))
    shop.manage("migrate", "--verbosity=0")
    shop.manage("seed_shop")
    web = start([str(python), "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"], env, folder / "web.log")
    worker = start([str(python), "-m", "celery", "-A", "config", "worker", "--pool=threads", "--concurrency=2",
                    "--without-gossip", "--without-mingle", "--without-heartbeat", "--loglevel=INFO"],
                   env, folder / "worker.log")
    try:
        wait_for_log(folder / "worker.log", "ready", timeout=90)
        wait_until(lambda: answers(shop.url), timeout=60, interval=0.1)
        yield shop
    finally:
        stop_process_group(web)
        stop_process_group(worker)


def answers(url: str) -> bool:
    try:
        return requests.get(f"{url}/sign-in/", timeout=5).status_code == 200
    except requests.ConnectionError:
        return False
