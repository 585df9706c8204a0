"""Who a cluster's processes run as.  PostgreSQL refuses to run as root, so
a root runner prepares clusters for the `postgres` account and runs every
server and client process as the data folder's owner; anyone else runs them
as themselves."""
from __future__ import annotations

import os
import pwd
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# the account a root runner gives new clusters to (Debian's packages make it)
SERVICE_ACCOUNT = "postgres"


class OwnerError(RuntimeError):
    """No account can own or run this cluster: one line."""


@dataclass(frozen=True)
class Owner:
    uid: int
    gid: int
    name: str
    home: str

    @property
    def is_other(self) -> bool:
        """True when a child must switch to this account (we are root)."""
        return os.geteuid() != self.uid

    def popen_kw(self) -> dict[str, Any]:
        """subprocess.Popen arguments that run the child as this account:
        the child execs the program directly (no runuser or su in between),
        so the program is this process's child, in its process tree."""
        if not self.is_other:
            return {}
        return {"user": self.uid, "group": self.gid,
                "extra_groups": os.getgrouplist(self.name, self.gid)}

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """This process's environment with the account's HOME, USER and
        LOGNAME (libpq and psql look for their files under HOME)."""
        env = dict(os.environ)
        if self.is_other:
            env.update(HOME=self.home, USER=self.name, LOGNAME=self.name)
        env.update(extra or {})
        return env


def _from_pw(pw: pwd.struct_passwd) -> Owner:
    return Owner(uid=pw.pw_uid, gid=pw.pw_gid, name=pw.pw_name, home=pw.pw_dir)


def for_new_cluster() -> Owner:
    """postgres when we are root, else ourselves."""
    if os.geteuid() != 0:
        return _from_pw(pwd.getpwuid(os.geteuid()))
    try:
        return _from_pw(pwd.getpwnam(SERVICE_ACCOUNT))
    except KeyError:
        raise OwnerError(f"no {SERVICE_ACCOUNT} account to own the cluster "
                         "(PostgreSQL does not run as root)") from None


def of_folder(data_dir: Path) -> Owner:
    """The data folder's owner, which must be us or (when we are root)
    any account but root."""
    uid = data_dir.stat().st_uid
    if uid == 0:
        raise OwnerError(f"{data_dir}: owned by root, and PostgreSQL does not run "
                         "as root (prepare clusters with this runner)")
    if os.geteuid() not in (0, uid):
        raise OwnerError(f"{data_dir}: owned by uid {uid}; run as that user or root")
    try:
        return _from_pw(pwd.getpwuid(uid))
    except KeyError:
        raise OwnerError(f"{data_dir}: its owner uid {uid} has no account") from None
