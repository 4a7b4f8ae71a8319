# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An AWX job of the job template playbooks/onboard_devices.yml, reproduced with ansible-runner.

What AWX does for a job (awx/main/tasks/jobs.py, awx/main/models/credential.py CredentialType.inject_credential):
the credential's file injectors are rendered in Jinja2's immutable sandbox into files under the private data
dir's env/ (mode 0600), their paths in tower.filename.<name>; then the env injectors; the environment and the
extra variables (with awx_job_id) go to ansible-runner, which runs the project's playbook. Here the emulator
speaks HTTPS with a certificate of its own authority, so that the job works only if the CA file reaches the
modules through NAC_CA_PATH.

Job 1 (CA bundle given) onboards two devices: it succeeds, its reports carry the job id, its set_stats artifact
is in the stats event (what AWX stores as the job's artifacts), and no key is in its output or events.
Job 2 (the same credential without the CA bundle) fails with a TLS message that names the credential's field.
Usage: awx_job_check.py PYTHON.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace

import yaml
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "nac_tls"))
from tls_check import Emulator, self_signed  # noqa: E402  pylint: disable=wrong-import-position

KEY = "nac-demo-admin-key"
DEVICES = [
    dict(hostname="awx-cam-01", group="Cameras", profile="Camera", macs=["02:00:00:aa:00:01"]),
    dict(hostname="awx-cam-02", group="Cameras", profile="Camera", macs=["02:00:00:aa:00:02"]),
]


def collection_root():
    for path in os.environ.get("ANSIBLE_COLLECTIONS_PATH", "").split(os.pathsep):
        root = os.path.join(path, "ansible_collections", "netaccess", "nac")
        if os.path.isdir(root):
            return root
    sys.exit("netaccess.nac is not on ANSIBLE_COLLECTIONS_PATH")


def inject(credential_type, inputs, private_data_dir):
    """The environment AWX gives a job for this credential (CredentialType.inject_credential)."""
    namespace = dict((name, value) for name, value in inputs.items() if isinstance(value, bool) or len(value))
    for field in credential_type["inputs"]["fields"]:
        if field["type"] == "boolean" and field["id"] not in inputs:
            namespace[field["id"]] = False
    sandbox = ImmutableSandboxedEnvironment()
    filenames = SimpleNamespace()
    for label, template in credential_type["injectors"].get("file", {}).items():
        handle, path = tempfile.mkstemp(dir=os.path.join(private_data_dir, "env"))
        with os.fdopen(handle, "w") as out:
            out.write(sandbox.from_string(template).render(**namespace))
        os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
        setattr(filenames, label.split(".", 1)[1], path)
    namespace["tower"] = SimpleNamespace(filename=filenames)
    return dict(
        (name, sandbox.from_string(template).render(**namespace))
        for name, template in credential_type["injectors"]["env"].items()
    )


def job(root, workdir, job_id, inputs, python):
    """Run one job; returns (rc, status, stdout, the text of every event file, the events, the report dir)."""
    with open(os.path.join(root, "extensions", "awx", "credential_type_nac.yml")) as handle:
        credential_type = yaml.safe_load(handle)
    private_data_dir = os.path.join(workdir, "job_%d" % job_id)
    for sub in ("env", "inventory", "project/playbooks"):
        os.makedirs(os.path.join(private_data_dir, sub))
    shutil.copy(
        os.path.join(root, "playbooks", "onboard_devices.yml"), os.path.join(private_data_dir, "project/playbooks")
    )
    with open(os.path.join(private_data_dir, "inventory", "hosts"), "w") as handle:
        handle.write("localhost ansible_connection=local ansible_python_interpreter=%s\n" % python)
    envvars = inject(credential_type, inputs, private_data_dir)
    with open(os.path.join(private_data_dir, "env", "envvars"), "w") as handle:
        json.dump(envvars, handle)
    reports = os.path.join(workdir, "reports")
    extravars = dict(
        awx_job_id=job_id,
        tower_job_id=job_id,
        # A survey answer (a question of type Textarea) arrives as text: the devices as YAML, one a line.
        nac_devices="".join("- %s\n" % json.dumps(device) for device in DEVICES),
        nac_report_path=reports,
        nac_wait_timeout=30,
    )
    with open(os.path.join(private_data_dir, "env", "extravars"), "w") as handle:
        json.dump(extravars, handle)
    runner = shutil.which("ansible-runner") or os.path.join(os.path.dirname(sys.executable), "ansible-runner")
    env = dict((name, value) for name, value in os.environ.items() if not name.startswith("NAC_"))
    done = subprocess.run(
        [runner, "run", private_data_dir, "-p", "playbooks/onboard_devices.yml", "--ident", str(job_id)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
        check=False,
    )
    artifacts = os.path.join(private_data_dir, "artifacts", str(job_id))
    if not os.path.isdir(artifacts):
        raise AssertionError("ansible-runner wrote no artifacts:\n%s" % done.stdout)
    with open(os.path.join(artifacts, "status")) as handle:
        status = handle.read().strip()
    with open(os.path.join(artifacts, "stdout")) as handle:
        stdout = handle.read()
    texts, events = [], []
    for path in sorted(glob.glob(os.path.join(artifacts, "job_events", "*.json"))):
        with open(path) as handle:
            texts.append(handle.read())
        events.append(json.loads(texts[-1]))
    return done.returncode, status, stdout, "\n".join(texts), events, reports, envvars


def main():
    python = sys.argv[1]
    root = collection_root()
    workdir = tempfile.mkdtemp(prefix="nac-awx-job-")
    started = time.monotonic()
    try:
        cert, key = self_signed(workdir)
        with open(cert) as handle:
            bundle = handle.read()
        with Emulator(tls_cert=cert, tls_key=key).start() as emulator:
            inputs = dict(api_url=emulator.url, api_key=KEY, validate_certs=True, ca_bundle=bundle, timeout="10")

            rc, status, stdout, texts, events, reports, envvars = job(root, workdir, 41, inputs, python)
            assert envvars["NAC_CA_PATH"].startswith(os.path.join(workdir, "job_41", "env")), envvars["NAC_CA_PATH"]
            assert rc == 0 and status == "successful", "job 41: rc %s, %s\n%s" % (rc, status, stdout)
            onboarded = "All 2 devices have their expected 802.1x status (AUTHENTICATED: 2); 2 created by this run"
            assert onboarded in stdout, stdout
            written = sorted(os.listdir(reports))
            # The record the next report compares with, the file of results the reports are made from, the reports.
            assert written == ["device_onboarding.last.json", "device_onboarding_41.1.jsonl"] + [
                "device_onboarding_41.%s" % ext for ext in ("csv", "html", "md")
            ], written
            assert stat.S_IMODE(os.stat(os.path.join(reports, "device_onboarding.last.json")).st_mode) == 0o600
            (stats,) = [event for event in events if event.get("event") == "playbook_on_stats"]
            artifact = stats["event_data"]["artifact_data"]["device_onboarding"]
            assert artifact["created"] == 2 and artifact["existing"] == 0 and artifact["not_reached"] == [], artifact
            assert artifact["summary"] == {"AUTHENTICATED": 2} and artifact["check_mode"] is False, artifact
            assert artifact["reports"] == [
                os.path.join(reports, "device_onboarding_41.%s" % ext) for ext in ("csv", "md", "html")
            ]
            assert KEY not in stdout and KEY not in texts, "the API key is in the job's output or events"
            print("ok - job 41 (CA bundle from the credential): 2 devices onboarded over HTTPS, reports _41, artifact")

            rc, status, stdout, texts, events, reports, envvars = job(
                root, workdir, 42, dict(inputs, ca_bundle=""), python
            )
            flat = " ".join(stdout.split())
            assert envvars["NAC_CA_PATH"] == "", envvars
            assert rc != 0 and status == "failed", "job 42: rc %s, %s\n%s" % (rc, status, stdout)
            assert "TLS verification failed for %s" % emulator.url in flat, stdout
            assert "in AWX, the field 'CA bundle (PEM)' of the NAC credential" in flat, stdout
            assert KEY not in stdout and KEY not in texts, "the API key is in the job's output or events"
            print("ok - job 42 (no CA bundle): fails, naming the credential's field 'CA bundle (PEM)'")
    except AssertionError as failure:
        print("FAILED - %s" % failure)
        return 1
    finally:
        shutil.rmtree(workdir, True)
    print("awx_job_template: 2 ansible-runner jobs in %.1f s" % (time.monotonic() - started))
    return 0


if __name__ == "__main__":
    sys.exit(main())
