FROM agentenvs/base:latest
COPY seed.py api.py /srv/
