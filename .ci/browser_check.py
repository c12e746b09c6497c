"""The course as a student sees it: JupyterLab in headless Chromium, each notebook opened, Run All,
screenshots of every screen, and a line per notebook of what went wrong on the page.

Not part of CI. Needs Debian's ``chromium`` and ``chromium-driver``
(``apt-get install -y chromium chromium-driver``) and Selenium (``pip install -e ".[browser]"``).

    python .ci/browser_check.py                       # every notebook, full mode, into /tmp
    python .ci/browser_check.py --fast 02 03          # two notebooks, MLNN_FAST=1
    python .ci/browser_check.py --validate 02         # also press nbgrader's Validate button

The notebooks are copied into a fresh folder beside a link to the project's ``figures/`` (the
layout of an assignment nbgrader hands out), so nothing of the repository is changed. JupyterLab
serves that folder only, as ``jupyter lab notebooks/`` does: an image or link above it shows as
broken. ``MLNN_DATA`` is passed on; figures go to the output folder. Screenshots are written as
``OUT/<notebook>_<nn>.png``; the summary line of each notebook counts its cells, the cells still
running, the error outputs, the stderr outputs and the images the browser could not load.
"""

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

ROOT = Path(__file__).resolve().parents[1]

#: The notebook on show (earlier ones stay open in hidden tabs).
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"

#: What the page shows, counted in the browser.
SUMMARY = f"""
const q = s => document.querySelectorAll('{PANEL} ' + s);
const images = [...q('.jp-Notebook img')];
return {{cells: q('.jp-Cell').length,
        running: [...q('.jp-InputPrompt')].filter(p => p.textContent.includes('*')).length,
        errors: q('[data-mime-type="application/vnd.jupyter.error"]').length,
        stderr: q('[data-mime-type="application/vnd.jupyter.stderr"]').length,
        broken: images.filter(i => i.complete && i.naturalWidth === 0).map(i => i.alt || i.src)}};
"""

SCROLLER = f"{PANEL} .jp-WindowedPanel-outer"

#: JupyterLab settings for the check: every cell in the page (no windowing, so that every cell is
#: counted and screenshot), no news.
SETTINGS = {"@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
            "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
                {"fetchNews": "false"}}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def kernels_busy(base, token):
    """How many kernels the server says are busy (or starting)."""
    try:
        with urllib.request.urlopen(f"{base}/api/kernels?token={token}", timeout=10) as answer:
            return sum(k["execution_state"] == "busy" for k in json.load(answer))
    except OSError:             # the server busy shutting a kernel down: ask again later
        return 1


def shut_down_kernels(base, token):
    with urllib.request.urlopen(f"{base}/api/kernels?token={token}", timeout=10) as answer:
        kernels = json.load(answer)
    for kernel in kernels:
        request = urllib.request.Request(f"{base}/api/kernels/{kernel['id']}?token={token}",
                                         method="DELETE")
        try:
            urllib.request.urlopen(request, timeout=30)
        except OSError:                 # gone already
            pass


def start_lab(folder, port, token, env):
    """``jupyter lab`` serving ``folder`` only; returns the process once the server answers."""
    command = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root",
               f"--port={port}", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={folder}"]
    log = open(Path(env["MLNN_FIGURES"]).parent / "jupyter.log", "w")
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(120):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api?token={token}", timeout=2)
            return process
        except OSError:
            time.sleep(1)
    process.terminate()
    raise SystemExit("jupyter lab did not start; see jupyter.log")


def browser(width, height):
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                 f"--window-size={width},{height}"):
        options.add_argument(flag)
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")
                                            or "/usr/bin/chromedriver"), options=options)


def click_menu(driver, menu, item):
    """Click ``item`` of the top menu ``menu`` (e.g. Run → Run All Cells)."""
    for label in driver.find_elements(By.CSS_SELECTOR, ".lm-MenuBar-itemLabel"):
        if label.text == menu:
            label.click()
            break
    time.sleep(0.5)
    for label in driver.find_elements(By.CSS_SELECTOR, ".lm-Menu-itemLabel"):
        if label.text == item:
            label.click()
            return
    raise RuntimeError(f"no menu item {menu} → {item}")


def wait_until(driver, done, timeout):
    """Poll until ``done()`` holds three times in a row (a cell can start as another ends)."""
    start, streak = time.time(), 0
    while time.time() - start < timeout and streak < 3:
        streak = streak + 1 if done() else 0
        time.sleep(2)
    return driver.execute_script(SUMMARY)


def screenshots(driver, out, stem, pages):
    """One screenshot per screen height, from the top, at most ``pages``."""
    driver.execute_script(f"document.querySelector('{SCROLLER}').scrollTop = 0")
    shots = []
    for page in range(pages):
        time.sleep(1)
        path = out / f"{stem}_{page:02d}.png"
        driver.save_screenshot(str(path))
        shots.append(path)
        moved = driver.execute_script(
            f"const s = document.querySelector('{SCROLLER}'); const before = s.scrollTop;"
            "s.scrollTop += s.clientHeight * 0.9; return s.scrollTop !== before;")
        if not moved:
            break
    return shots


def validate(driver, out, stem, timeout):
    """Press nbgrader's Validate button and screenshot the dialog it opens."""
    button = driver.execute_script(
        f"return [...document.querySelectorAll('{PANEL} .jp-Toolbar *')]"
        ".find(e => e.children.length === 0 && e.textContent.trim() === 'Validate');")
    if button is None:
        return "no Validate button"
    button.click()
    start = time.time()
    while time.time() - start < timeout:
        dialogs = driver.find_elements(By.CSS_SELECTOR, ".jp-Dialog-content")
        if dialogs and "Validating" not in dialogs[0].text:
            driver.save_screenshot(str(out / f"{stem}_validate.png"))
            return dialogs[0].text[:2000]
        time.sleep(2)
    return "Validate did not finish"


def check(driver, base, token, out, stem, args):
    driver.get(f"{base}/lab/tree/{stem}.ipynb")
    idle = lambda: kernels_busy(base, token) == 0 and driver.execute_script(SUMMARY)["cells"]
    wait_until(driver, idle, 120)
    driver.save_screenshot(str(out / f"{stem}_first_screen.png"))
    started = time.time()
    click_menu(driver, "Run", "Run All Cells")
    time.sleep(5)
    state = wait_until(driver, lambda: idle() and driver.execute_script(SUMMARY)["running"] == 0,
                       args.timeout)
    seconds = time.time() - started
    shots = screenshots(driver, out, stem, args.pages)
    print(f"{stem}: {state['cells']} cells in {seconds:.0f} s; still running {state['running']}, "
          f"errors {state['errors']}, stderr outputs {state['stderr']}, "
          f"broken images {state['broken'] or 0}; {len(shots)} screenshots", flush=True)
    if stem in args.validate:
        print(f"{stem}: Validate says:\n{validate(driver, out, stem, args.timeout)}", flush=True)
    shut_down_kernels(base, token)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", help="keys or stems (default: every notebook)")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "mlnn-browser")
    parser.add_argument("--fast", action="store_true", help="MLNN_FAST=1 (a smoke test)")
    parser.add_argument("--timeout", type=float, default=1200, help="seconds per Run All")
    parser.add_argument("--pages", type=int, default=60, help="screenshots per notebook, at most")
    parser.add_argument("--validate", nargs="*", default=[], help="notebooks to Validate too")
    parser.add_argument("--size", default="1400x1000", help="window size, WIDTHxHEIGHT")
    args = parser.parse_args()
    stems = [p.stem for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]
    chosen = [s for s in stems if not args.notebooks
              or any(s == n or s.split("_")[0] == n for n in args.notebooks)]
    args.validate = [s for s in stems if any(s == n or s.split("_")[0] == n for n in args.validate)]
    args.out.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="mlnn-course-"))
    for stem in chosen:
        shutil.copy(ROOT / "notebooks" / f"{stem}.ipynb", folder)
    (folder / "figures").symlink_to(ROOT / "figures")
    settings = folder.with_name(folder.name + "-settings")
    for name, values in SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(values), encoding="utf-8")
    env = dict(os.environ, MLNN_FIGURES=str(args.out / "figures"), MPLBACKEND="Agg",
               JUPYTERLAB_SETTINGS_DIR=str(settings),              # and no workspace of a
               JUPYTERLAB_WORKSPACES_DIR=str(settings / "workspaces"))   # former run reopened
    env.pop("MLNN_FAST", None)
    if args.fast:
        env["MLNN_FAST"] = "1"
    port, token = free_port(), secrets.token_hex(16)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped"))     # so that finally runs
    lab = start_lab(folder, port, token, env)
    width, height = (int(v) for v in args.size.split("x"))
    driver = browser(width, height)
    try:
        driver.get(f"http://127.0.0.1:{port}/lab?token={token}")
        time.sleep(5)
        for button in driver.find_elements(By.CSS_SELECTOR, ".Toastify button"):
            if button.text == "No":             # JupyterLab's "notified about news?" toast
                button.click()
        for stem in chosen:
            check(driver, f"http://127.0.0.1:{port}", token, args.out, stem, args)
    finally:
        driver.quit()
        lab.terminate()
        lab.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(settings, ignore_errors=True)
    print(f"screenshots in {args.out}")


if __name__ == "__main__":
    main()
