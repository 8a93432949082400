"""A person signed in to a `msgbatch serve` started by a bench script: its first sign-in link
(from the serve output), a password set, the session cookie and the CSRF token kept; `call` loads
a page or posts a form without following redirects, `cpu` reads a process's CPU seconds."""
import http.cookiejar
import re
import urllib.parse
import urllib.request


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


class Session:
    def __init__(self, serve_out):
        out = open(serve_out).read()
        self.base = re.search(r"msgbatch console: (\S+)", out).group(1).replace("localhost", "127.0.0.1")
        link = re.search(r"first sign-in \(.*\): (\S+)", out).group(1).replace("localhost", "127.0.0.1")
        jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect)
        welcome = link.replace(self.base, "")
        self.call(welcome)
        self.call(welcome, {"password": "benchmark password", "again": "benchmark password"})
        self.cookie = "; ".join(f"{c.name}={c.value}" for c in jar)
        _, _, page = self.call("/campaigns")
        self.csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1)

    def call(self, path, fields=None):
        """(status, headers, text) of a GET, or of a POST of `fields`."""
        data = urllib.parse.urlencode(fields).encode() if fields is not None else None
        try:
            response = self.opener.open(self.base + path, data)
            return response.status, response.headers, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read().decode()


def approved_campaign(session, work, csv, name):
    """A campaign of `work`/campaign.toml and `csv` uploaded, checked, submitted and approved by
    the one person (serve --allow-self-approval); its id and its number of valid recipients."""
    import re, subprocess
    located = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{redirect_url}", "-b", session.cookie,
        "-F", f"csrf={session.csrf}", "-F", f"name={name}", "-F", f"campaign_file=@{work}/campaign.toml",
        "-F", f"recipients=@{csv};filename=recipients.csv", session.base + "/campaigns"],
        capture_output=True, text=True).stdout
    cid = located.rstrip("/").split("/campaigns/")[1].split("/")[0]
    for step in ("check", "submit", "approve"):
        status, _, body = session.call(f"/campaigns/{cid}/{step}", {"csrf": session.csrf})
        assert status == 303, (step, status, body[:300])
    _, _, check = session.call(f"/campaigns/{cid}/check")
    valid = int(re.search(r"= valid ([\d,]+)", check).group(1).replace(",", ""))
    return cid, valid


def cpu(pid):
    """User + system CPU seconds of a process so far."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0
