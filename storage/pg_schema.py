"""A team project's tables on PostgreSQL, as numbered migrations (the same shape as `storage.schema`).

Everything lives in the schema `thinslice` of the team's database. Version 1 holds label sets, annotations
and their history; who may change what is decided here, by the server, not by the client:

- every member is a PostgreSQL role in the group `thinslice_member`; a lead is also in `thinslice_lead`;
- row-level security lets a member read every annotation and create or change only rows whose annotator
  is their own role name; a lead may also write the `consensus` tier (adjudication) and the label sets;
- history rows (`annotation_event`, `label_set_event`) are never updated or deleted: the privileges are
  revoked and a trigger refuses it even for the tables' owner; since version 4 only the server writes
  them (members have no INSERT): the triggers and `record_conflict` run with the owner's rights;
- every write of an annotation row, however it is made, gets its revision, author and time and its
  history event from triggers, so none escapes the history;
- `apply_edit` is the client's write of an annotation: it checks the edit's base revision, so a
  conflicting edit changes nothing but is kept in the history beside the version it lost to; an edit sent
  twice (a resent outbox entry) is written once;
- every event raises a NOTIFY: label sets on the channel `thinslice`, a dataset's labels and presence on
  `thinslice_` + the first 16 hex digits of the md5 of its name, so a client hears only of its datasets.

Version 2 stamps each event with its transaction id (catch-up by commit, see `team_server.commit_horizon`);
version 3 holds labels to the import path's value rule; version 4 makes the history the server's own;
version 5 adds `apply_edits` (many edits, one round trip) and notifications a client can tell its own by;
version 6 states the oldest client version the server serves (`serves`); version 7 gives label-set changes
a base revision and keeps their conflicts (`apply_label_set`).
`apply_edit` runs with the caller's rights (SECURITY INVOKER), so row-level security applies to it as to
raw SQL. The migrations are run by the database owner (`thinslice team init`).
"""
from __future__ import annotations

SCHEMA = "thinslice"
CHANNEL = "thinslice"
MEMBER_ROLE = "thinslice_member"
LEAD_ROLE = "thinslice_lead"
CONSENSUS = "consensus"   # the annotator name of the adjudicated tier

V1 = f"""
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{MEMBER_ROLE}') THEN
        CREATE ROLE {MEMBER_ROLE} NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{LEAD_ROLE}') THEN
        CREATE ROLE {LEAD_ROLE} NOLOGIN IN ROLE {MEMBER_ROLE};
    END IF;
END $$;

CREATE TABLE {SCHEMA}.annotation (
    id BIGSERIAL PRIMARY KEY,
    uid UUID NOT NULL UNIQUE,              -- made by the client that created it, so a resend is recognised
    dataset TEXT NOT NULL,                 -- the dataset's name in every member's local store
    stimulus TEXT NOT NULL,                -- the stimulus's own id in the release
    annotator TEXT NOT NULL,               -- a member's role name, or 'consensus'
    label_set TEXT NOT NULL,
    label TEXT,
    start_s DOUBLE PRECISION,
    end_s DOUBLE PRECISION,
    value TEXT,
    note TEXT,
    media_role TEXT,
    revision INTEGER NOT NULL DEFAULT 1,
    deleted BOOLEAN NOT NULL DEFAULT false,
    updated_by TEXT NOT NULL DEFAULT current_user,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK ((start_s IS NULL) = (end_s IS NULL)),
    CHECK (start_s IS NULL OR (start_s >= 0 AND end_s >= start_s))
);
CREATE INDEX ON {SCHEMA}.annotation (dataset, stimulus);

CREATE TABLE {SCHEMA}.annotation_event (
    id BIGSERIAL PRIMARY KEY,
    edit_uid UUID NOT NULL UNIQUE,         -- one edit is written once, however often it is sent
    annotation_uid UUID NOT NULL,
    dataset TEXT NOT NULL,
    stimulus TEXT NOT NULL,
    member TEXT NOT NULL DEFAULT current_user,
    happened_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    action TEXT NOT NULL,                  -- create, update, delete, restore, conflict
    base_revision INTEGER NOT NULL,
    before JSONB,
    after JSONB
);
CREATE INDEX ON {SCHEMA}.annotation_event (annotation_uid);

CREATE TABLE {SCHEMA}.label_set (
    name TEXT PRIMARY KEY,
    document JSONB NOT NULL,               -- the label-set file format: name, scope, description, labels
    revision INTEGER NOT NULL DEFAULT 1,
    updated_by TEXT NOT NULL DEFAULT current_user,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE {SCHEMA}.label_set_event (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL,
    member TEXT NOT NULL DEFAULT current_user,
    happened_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    document JSONB                         -- NULL: the set was deleted
);

-- who has which stimulus open, so the others see it in their status bar
CREATE TABLE {SCHEMA}.presence (
    member TEXT PRIMARY KEY DEFAULT current_user,
    dataset TEXT,
    stimulus TEXT,
    seen_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE FUNCTION {SCHEMA}.refuse_history_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'history rows of % cannot be changed or deleted', TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER keep_history BEFORE UPDATE OR DELETE ON {SCHEMA}.annotation_event
    FOR EACH ROW EXECUTE FUNCTION {SCHEMA}.refuse_history_change();
CREATE TRIGGER keep_history_truncate BEFORE TRUNCATE ON {SCHEMA}.annotation_event
    FOR EACH STATEMENT EXECUTE FUNCTION {SCHEMA}.refuse_history_change();
CREATE TRIGGER keep_history BEFORE UPDATE OR DELETE ON {SCHEMA}.label_set_event
    FOR EACH ROW EXECUTE FUNCTION {SCHEMA}.refuse_history_change();
CREATE TRIGGER keep_history_truncate BEFORE TRUNCATE ON {SCHEMA}.label_set_event
    FOR EACH STATEMENT EXECUTE FUNCTION {SCHEMA}.refuse_history_change();

CREATE FUNCTION {SCHEMA}.announce() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- news of a dataset goes to its own channel: a client hears only of the datasets it has
    IF TG_TABLE_NAME = 'annotation_event' THEN
        PERFORM pg_notify('{CHANNEL}_' || left(md5(NEW.dataset), 16),
            json_build_object('kind', 'annotation', 'event', NEW.id,
            'member', NEW.member, 'dataset', NEW.dataset, 'stimulus', NEW.stimulus)::text);
    ELSIF TG_TABLE_NAME = 'label_set_event' THEN
        PERFORM pg_notify('{CHANNEL}', json_build_object('kind', 'label_set', 'event', NEW.id,
            'member', NEW.member, 'name', NEW.name)::text);
    ELSIF coalesce(NEW.dataset, OLD.dataset) IS NOT NULL THEN
        PERFORM pg_notify('{CHANNEL}_' || left(md5(coalesce(NEW.dataset, OLD.dataset)), 16),
            json_build_object('kind', 'presence', 'member', NEW.member,
            'dataset', NEW.dataset, 'stimulus', NEW.stimulus)::text);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER announce AFTER INSERT ON {SCHEMA}.annotation_event
    FOR EACH ROW EXECUTE FUNCTION {SCHEMA}.announce();
CREATE TRIGGER announce AFTER INSERT ON {SCHEMA}.label_set_event
    FOR EACH ROW EXECUTE FUNCTION {SCHEMA}.announce();
CREATE TRIGGER announce AFTER INSERT OR UPDATE ON {SCHEMA}.presence
    FOR EACH ROW EXECUTE FUNCTION {SCHEMA}.announce();

-- May the current role write a row of `who`? Its own rows; a lead also the consensus tier.
CREATE FUNCTION {SCHEMA}.may_write(who TEXT) RETURNS BOOLEAN LANGUAGE sql STABLE AS $$
    SELECT who = current_user OR (who = '{CONSENSUS}' AND pg_has_role(current_user, '{LEAD_ROLE}', 'MEMBER'))
$$;

ALTER TABLE {SCHEMA}.annotation ENABLE ROW LEVEL SECURITY;
ALTER TABLE {SCHEMA}.annotation_event ENABLE ROW LEVEL SECURITY;
ALTER TABLE {SCHEMA}.label_set ENABLE ROW LEVEL SECURITY;
ALTER TABLE {SCHEMA}.label_set_event ENABLE ROW LEVEL SECURITY;
ALTER TABLE {SCHEMA}.presence ENABLE ROW LEVEL SECURITY;

CREATE POLICY read_all ON {SCHEMA}.annotation FOR SELECT USING (true);
CREATE POLICY add_own ON {SCHEMA}.annotation FOR INSERT WITH CHECK ({SCHEMA}.may_write(annotator));
CREATE POLICY change_own ON {SCHEMA}.annotation FOR UPDATE
    USING ({SCHEMA}.may_write(annotator)) WITH CHECK ({SCHEMA}.may_write(annotator));

CREATE POLICY read_all ON {SCHEMA}.annotation_event FOR SELECT USING (true);
CREATE POLICY add_own ON {SCHEMA}.annotation_event FOR INSERT WITH CHECK (member = current_user);

CREATE POLICY read_all ON {SCHEMA}.label_set FOR SELECT USING (true);
CREATE POLICY lead_writes ON {SCHEMA}.label_set FOR ALL
    USING (pg_has_role(current_user, '{LEAD_ROLE}', 'MEMBER'))
    WITH CHECK (pg_has_role(current_user, '{LEAD_ROLE}', 'MEMBER') AND updated_by = current_user);
CREATE POLICY read_all ON {SCHEMA}.label_set_event FOR SELECT USING (true);
CREATE POLICY lead_writes ON {SCHEMA}.label_set_event FOR INSERT
    WITH CHECK (pg_has_role(current_user, '{LEAD_ROLE}', 'MEMBER') AND member = current_user);

CREATE POLICY read_all ON {SCHEMA}.presence FOR SELECT USING (true);
CREATE POLICY own_row ON {SCHEMA}.presence FOR ALL USING (member = current_user)
    WITH CHECK (member = current_user);

-- Whatever writes an annotation row (apply_edit, or raw SQL a member is allowed), its revision, author and
-- time are set here and its history event is written here, so no write of a label escapes the history.
CREATE FUNCTION {SCHEMA}.stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        NEW.revision := 1;
    ELSE
        NEW.uid := OLD.uid;
        NEW.dataset := OLD.dataset;
        NEW.stimulus := OLD.stimulus;
        NEW.revision := OLD.revision + 1;
    END IF;
    NEW.updated_by := current_user;
    NEW.updated_at := now();
    RETURN NEW;
END $$;
CREATE TRIGGER stamp BEFORE INSERT OR UPDATE ON {SCHEMA}.annotation
    FOR EACH ROW EXECUTE FUNCTION {SCHEMA}.stamp();

CREATE FUNCTION {SCHEMA}.record() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {SCHEMA}.annotation_event (edit_uid, annotation_uid, dataset, stimulus, action, base_revision,
                                           before, after)
    VALUES (coalesce(nullif(current_setting('thinslice.edit_uid', true), '')::UUID, gen_random_uuid()),
            NEW.uid, NEW.dataset, NEW.stimulus,
            CASE WHEN TG_OP = 'INSERT' THEN 'create'
                 WHEN NEW.deleted AND NOT OLD.deleted THEN 'delete'
                 WHEN OLD.deleted AND NOT NEW.deleted THEN 'restore'
                 ELSE 'update' END,
            CASE WHEN TG_OP = 'INSERT' THEN 0 ELSE OLD.revision END,
            CASE WHEN TG_OP = 'INSERT' THEN NULL ELSE to_jsonb(OLD) END, to_jsonb(NEW));
    PERFORM set_config('thinslice.edit_uid', '', true);   -- one edit uid names one event
    RETURN NULL;
END $$;
CREATE TRIGGER record AFTER INSERT OR UPDATE ON {SCHEMA}.annotation
    FOR EACH ROW EXECUTE FUNCTION {SCHEMA}.record();

-- The one write of an annotation a client makes. `edit` holds edit_uid, uid, dataset, stimulus, annotator,
-- base_revision (0 for a new label) and the row's state after the edit (label_set ... media_role, deleted).
-- Returns {{status: ok | duplicate | conflict, row: the row as stored now}}.
CREATE FUNCTION {SCHEMA}.apply_edit(edit JSONB) RETURNS JSONB LANGUAGE plpgsql AS $$
DECLARE
    current {SCHEMA}.annotation;
    updated {SCHEMA}.annotation;
    base INTEGER := (edit->>'base_revision')::INTEGER;
    state JSONB := edit->'after';
    known BOOLEAN;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext((edit->>'uid')));
    IF EXISTS (SELECT 1 FROM {SCHEMA}.annotation_event WHERE edit_uid = (edit->>'edit_uid')::UUID) THEN
        SELECT * INTO current FROM {SCHEMA}.annotation WHERE uid = (edit->>'uid')::UUID;
        RETURN jsonb_build_object('status', 'duplicate', 'row', to_jsonb(current));
    END IF;
    SELECT * INTO current FROM {SCHEMA}.annotation WHERE uid = (edit->>'uid')::UUID FOR UPDATE;
    known := FOUND;
    IF known AND current.revision <> base THEN
        -- someone else's version got there first: keep it, and keep this one in the history beside it
        INSERT INTO {SCHEMA}.annotation_event (edit_uid, annotation_uid, dataset, stimulus, action, base_revision,
                                               before, after)
        VALUES ((edit->>'edit_uid')::UUID, current.uid, current.dataset, current.stimulus, 'conflict', base,
                to_jsonb(current), state);
        RETURN jsonb_build_object('status', 'conflict', 'row', to_jsonb(current));
    END IF;
    PERFORM set_config('thinslice.edit_uid', edit->>'edit_uid', true);
    IF NOT known THEN
        IF EXISTS (SELECT 1 FROM {SCHEMA}.annotation WHERE uid = (edit->>'uid')::UUID) THEN
            RAISE EXCEPTION 'annotation % is not yours to change', edit->>'uid'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        INSERT INTO {SCHEMA}.annotation (uid, dataset, stimulus, annotator, label_set, label, start_s, end_s,
                                         value, note, media_role, deleted)
        VALUES ((edit->>'uid')::UUID, edit->>'dataset', edit->>'stimulus', edit->>'annotator',
                state->>'label_set', state->>'label', (state->>'start_s')::DOUBLE PRECISION,
                (state->>'end_s')::DOUBLE PRECISION, state->>'value', state->>'note', state->>'media_role',
                coalesce((state->>'deleted')::BOOLEAN, false))
        RETURNING * INTO updated;
    ELSE
        UPDATE {SCHEMA}.annotation SET label_set = state->>'label_set', label = state->>'label',
               start_s = (state->>'start_s')::DOUBLE PRECISION, end_s = (state->>'end_s')::DOUBLE PRECISION,
               value = state->>'value', note = state->>'note', media_role = state->>'media_role',
               deleted = coalesce((state->>'deleted')::BOOLEAN, false)
         WHERE uid = current.uid
        RETURNING * INTO updated;
    END IF;
    RETURN jsonb_build_object('status', 'ok', 'row', to_jsonb(updated));
END $$;

REVOKE ALL ON ALL TABLES IN SCHEMA {SCHEMA} FROM PUBLIC;
GRANT USAGE ON SCHEMA {SCHEMA} TO {MEMBER_ROLE};
GRANT SELECT, INSERT, UPDATE ON {SCHEMA}.annotation TO {MEMBER_ROLE};
GRANT SELECT, INSERT ON {SCHEMA}.annotation_event, {SCHEMA}.label_set_event TO {MEMBER_ROLE};
GRANT SELECT ON {SCHEMA}.label_set TO {MEMBER_ROLE};
GRANT INSERT, UPDATE, DELETE ON {SCHEMA}.label_set TO {LEAD_ROLE};
GRANT SELECT, INSERT, UPDATE ON {SCHEMA}.presence TO {MEMBER_ROLE};
GRANT USAGE ON ALL SEQUENCES IN SCHEMA {SCHEMA} TO {MEMBER_ROLE};
REVOKE UPDATE, DELETE, TRUNCATE ON {SCHEMA}.annotation_event, {SCHEMA}.label_set_event FROM PUBLIC;
"""

# Version 2: catch-up by commit order. Event ids are taken when a transaction writes, not when it commits, so
# a reader that had gone past a later id could miss an earlier one committed after it; each event therefore
# carries its transaction's id, and a reader re-reads from the oldest transaction that could still have been
# running at its last read (`pg_snapshot_xmin`), which commits in any order cannot slip under.
V2 = f"""
ALTER TABLE {SCHEMA}.annotation_event ADD COLUMN xact xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX ON {SCHEMA}.annotation_event (xact);
"""


def _value_rule() -> str:
    """The CHECK of what a label on the server may hold: the import path's rule (`storage.validation`), so a
    row one member's raw SQL could write is one every member's store can hold. NaN and the infinities are
    named, as PostgreSQL counts NaN greater than every number."""
    from storage.validation import CONTROL_CHARACTERS, NAME_COLUMNS
    # PostgreSQL text never holds NUL, and its regular expressions refuse a NUL escape: the class starts at 1
    pattern = CONTROL_CHARACTERS.replace("\\x00", "\\x01")
    names = [c for c in NAME_COLUMNS["annotations"] if c != "stimulus"] + ["dataset", "stimulus"]
    texts = " AND ".join(f"coalesce({c}, '') !~ '{pattern}'" for c in names)
    times = ("start_s IS NULL OR (start_s <> 'NaN' AND end_s <> 'NaN' AND start_s >= 0"
             " AND end_s < 'Infinity' AND end_s >= start_s)")
    return f"({times}) AND {texts}"


# Version 3: the same value rule on the server as in every store, so no member's row can stop the others' sync.
# NOT VALID: a row written before stays (clients skip and report it) until someone changes it.
V3 = f"""
ALTER TABLE {SCHEMA}.annotation ADD CONSTRAINT storable CHECK ({_value_rule()}) NOT VALID;
"""

# Version 4: history only the server writes. Members lose INSERT on the history tables; the triggers that
# record an annotation's write and a label set's change, and the function that records a conflict, write it
# with the owner's rights, naming the member the server saw.
V4 = f"""
REVOKE INSERT ON {SCHEMA}.annotation_event, {SCHEMA}.label_set_event FROM {MEMBER_ROLE};
DROP POLICY add_own ON {SCHEMA}.annotation_event;
DROP POLICY lead_writes ON {SCHEMA}.label_set_event;

CREATE OR REPLACE FUNCTION {SCHEMA}.record() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO {SCHEMA}.annotation_event (edit_uid, annotation_uid, dataset, stimulus, member, action,
                                           base_revision, before, after)
    VALUES (coalesce(nullif(current_setting('thinslice.edit_uid', true), '')::UUID, gen_random_uuid()),
            NEW.uid, NEW.dataset, NEW.stimulus, NEW.updated_by,   -- set by `stamp` as the writing role
            CASE WHEN TG_OP = 'INSERT' THEN 'create'
                 WHEN NEW.deleted AND NOT OLD.deleted THEN 'delete'
                 WHEN OLD.deleted AND NOT NEW.deleted THEN 'restore'
                 ELSE 'update' END,
            CASE WHEN TG_OP = 'INSERT' THEN 0 ELSE OLD.revision END,
            CASE WHEN TG_OP = 'INSERT' THEN NULL ELSE to_jsonb(OLD) END, to_jsonb(NEW));
    PERFORM set_config('thinslice.edit_uid', '', true);   -- one edit uid names one event
    RETURN NULL;
END $$;

-- A conflict: an edit of a label this member may write, built on a revision the label no longer has. Only
-- then is it recorded, in the caller's name, beside the version it lost to.
CREATE FUNCTION {SCHEMA}.record_conflict(edit JSONB) RETURNS {SCHEMA}.annotation LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    current {SCHEMA}.annotation;
BEGIN
    SELECT * INTO current FROM {SCHEMA}.annotation WHERE uid = (edit->>'uid')::UUID FOR UPDATE;
    IF NOT FOUND OR current.revision = (edit->>'base_revision')::INTEGER THEN
        RAISE EXCEPTION 'edit % is no conflict', edit->>'edit_uid' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NOT (current.annotator = session_user OR (current.annotator = '{CONSENSUS}'
            AND pg_has_role(session_user, '{LEAD_ROLE}', 'MEMBER'))) THEN
        RAISE EXCEPTION 'annotation % is not yours to change', current.uid USING ERRCODE = 'insufficient_privilege';
    END IF;
    INSERT INTO {SCHEMA}.annotation_event (edit_uid, annotation_uid, dataset, stimulus, member, action,
                                           base_revision, before, after)
    VALUES ((edit->>'edit_uid')::UUID, current.uid, current.dataset, current.stimulus, session_user, 'conflict',
            (edit->>'base_revision')::INTEGER, to_jsonb(current), edit->'after');
    RETURN current;
END $$;
REVOKE ALL ON FUNCTION {SCHEMA}.record_conflict(JSONB) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION {SCHEMA}.record_conflict(JSONB) TO {MEMBER_ROLE};

CREATE OR REPLACE FUNCTION {SCHEMA}.apply_edit(edit JSONB) RETURNS JSONB LANGUAGE plpgsql AS $$
DECLARE
    current {SCHEMA}.annotation;
    updated {SCHEMA}.annotation;
    base INTEGER := (edit->>'base_revision')::INTEGER;
    state JSONB := edit->'after';
    known BOOLEAN;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext((edit->>'uid')));
    IF EXISTS (SELECT 1 FROM {SCHEMA}.annotation_event WHERE edit_uid = (edit->>'edit_uid')::UUID) THEN
        SELECT * INTO current FROM {SCHEMA}.annotation WHERE uid = (edit->>'uid')::UUID;
        RETURN jsonb_build_object('status', 'duplicate', 'row', to_jsonb(current));
    END IF;
    SELECT * INTO current FROM {SCHEMA}.annotation WHERE uid = (edit->>'uid')::UUID FOR UPDATE;
    known := FOUND;
    IF known AND current.revision <> base THEN
        -- someone else's version got there first: keep it, and keep this one in the history beside it
        current := {SCHEMA}.record_conflict(edit);
        RETURN jsonb_build_object('status', 'conflict', 'row', to_jsonb(current));
    END IF;
    PERFORM set_config('thinslice.edit_uid', edit->>'edit_uid', true);
    IF NOT known THEN
        IF EXISTS (SELECT 1 FROM {SCHEMA}.annotation WHERE uid = (edit->>'uid')::UUID) THEN
            RAISE EXCEPTION 'annotation % is not yours to change', edit->>'uid'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        INSERT INTO {SCHEMA}.annotation (uid, dataset, stimulus, annotator, label_set, label, start_s, end_s,
                                         value, note, media_role, deleted)
        VALUES ((edit->>'uid')::UUID, edit->>'dataset', edit->>'stimulus', edit->>'annotator',
                state->>'label_set', state->>'label', (state->>'start_s')::DOUBLE PRECISION,
                (state->>'end_s')::DOUBLE PRECISION, state->>'value', state->>'note', state->>'media_role',
                coalesce((state->>'deleted')::BOOLEAN, false))
        RETURNING * INTO updated;
    ELSE
        UPDATE {SCHEMA}.annotation SET label_set = state->>'label_set', label = state->>'label',
               start_s = (state->>'start_s')::DOUBLE PRECISION, end_s = (state->>'end_s')::DOUBLE PRECISION,
               value = state->>'value', note = state->>'note', media_role = state->>'media_role',
               deleted = coalesce((state->>'deleted')::BOOLEAN, false)
         WHERE uid = current.uid
        RETURNING * INTO updated;
    END IF;
    RETURN jsonb_build_object('status', 'ok', 'row', to_jsonb(updated));
END $$;

-- a label set's change writes its own history event (members no longer insert them)
CREATE FUNCTION {SCHEMA}.record_label_set() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO {SCHEMA}.label_set_event (name, member, document)
    VALUES (coalesce(NEW.name, OLD.name), session_user, CASE WHEN TG_OP = 'DELETE' THEN NULL ELSE NEW.document END);
    RETURN NULL;
END $$;
CREATE TRIGGER record AFTER INSERT OR UPDATE OR DELETE ON {SCHEMA}.label_set
    FOR EACH ROW EXECUTE FUNCTION {SCHEMA}.record_label_set();
"""

# Version 5: load. `apply_edits` sends many edits in one round trip, each as `apply_edit` would, stopping
# at the first the server refuses (what follows it stays with the client, in order). A notification names
# the writing backend, so a client skips the news of its own edits, and carries no event id: PostgreSQL
# folds identical notifications of one transaction into one, so a batch wakes each client once. A presence
# row said again unchanged (a heartbeat) wakes nobody.
V5 = f"""
CREATE FUNCTION {SCHEMA}.apply_edits(edits JSONB) RETURNS JSONB LANGUAGE plpgsql AS $$
DECLARE
    results JSONB := '[]'::JSONB;
    edit JSONB;
BEGIN
    FOR edit IN SELECT value FROM jsonb_array_elements(edits) LOOP
        BEGIN
            results := results || jsonb_build_array({SCHEMA}.apply_edit(edit));
        EXCEPTION
            WHEN check_violation OR data_exception THEN
                RETURN results || jsonb_build_array(jsonb_build_object('status', 'invalid', 'reason', SQLERRM));
            WHEN insufficient_privilege OR raise_exception THEN
                RETURN results || jsonb_build_array(jsonb_build_object('status', 'refused', 'reason', SQLERRM));
        END;
    END LOOP;
    RETURN results;
END $$;

CREATE OR REPLACE FUNCTION {SCHEMA}.announce() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- news of a dataset goes to its own channel: a client hears only of the datasets it has
    IF TG_TABLE_NAME = 'annotation_event' THEN
        PERFORM pg_notify('{CHANNEL}_' || left(md5(NEW.dataset), 16),
            json_build_object('kind', 'annotation', 'member', NEW.member, 'dataset', NEW.dataset,
                              'pid', pg_backend_pid())::text);
    ELSIF TG_TABLE_NAME = 'label_set_event' THEN
        PERFORM pg_notify('{CHANNEL}', json_build_object('kind', 'label_set', 'event', NEW.id,
            'member', NEW.member, 'name', NEW.name, 'pid', pg_backend_pid())::text);
    ELSIF TG_OP = 'UPDATE' AND NEW.dataset IS NOT DISTINCT FROM OLD.dataset
          AND NEW.stimulus IS NOT DISTINCT FROM OLD.stimulus THEN
        RETURN NULL;   -- a heartbeat: nobody needs waking for it
    ELSIF coalesce(NEW.dataset, OLD.dataset) IS NOT NULL THEN
        PERFORM pg_notify('{CHANNEL}_' || left(md5(coalesce(NEW.dataset, OLD.dataset)), 16),
            json_build_object('kind', 'presence', 'member', NEW.member,
            'dataset', NEW.dataset, 'stimulus', NEW.stimulus)::text);
    END IF;
    RETURN NULL;
END $$;
"""

# Version 6: the server states the oldest client it serves, so a client older than the project's schema
# still works as long as nothing it relies on has changed (the command line and the window ask at joining).
# A migration that breaks older clients raises it; version 4 did (members no longer insert history).
V6 = f"""
CREATE TABLE {SCHEMA}.serves (oldest_client INTEGER NOT NULL);
INSERT INTO {SCHEMA}.serves VALUES (4);
GRANT SELECT ON {SCHEMA}.serves TO PUBLIC;
"""

# Version 7: label sets as labels: a change names the revision of the set it was made on; one built on a
# revision the set no longer has changes nothing and is kept in the history as a `conflict` beside the
# version that won (written by the server, in the caller's name, only for a lead: only a lead edits sets).
V7 = f"""
ALTER TABLE {SCHEMA}.label_set_event ADD COLUMN action TEXT NOT NULL DEFAULT 'change';   -- change, delete, conflict
ALTER TABLE {SCHEMA}.label_set_event ADD COLUMN base_revision INTEGER;

CREATE OR REPLACE FUNCTION {SCHEMA}.record_label_set() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO {SCHEMA}.label_set_event (name, member, document, action, base_revision)
    VALUES (coalesce(NEW.name, OLD.name), session_user, CASE WHEN TG_OP = 'DELETE' THEN NULL ELSE NEW.document END,
            CASE WHEN TG_OP = 'DELETE' THEN 'delete' ELSE 'change' END,
            CASE WHEN TG_OP = 'INSERT' THEN 0 ELSE OLD.revision END);
    RETURN NULL;
END $$;

CREATE FUNCTION {SCHEMA}.record_label_set_conflict(change JSONB) RETURNS VOID LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT pg_has_role(session_user, '{LEAD_ROLE}', 'MEMBER') THEN
        RAISE EXCEPTION 'only a lead edits label sets' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF coalesce((SELECT revision FROM {SCHEMA}.label_set WHERE name = change->>'name'), 0)
            = (change->>'base_revision')::INTEGER THEN
        RAISE EXCEPTION 'the change of % is no conflict', change->>'name' USING ERRCODE = 'insufficient_privilege';
    END IF;
    INSERT INTO {SCHEMA}.label_set_event (name, member, document, action, base_revision)
    VALUES (change->>'name', session_user, change->'document', 'conflict', (change->>'base_revision')::INTEGER);
END $$;
REVOKE ALL ON FUNCTION {SCHEMA}.record_label_set_conflict(JSONB) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION {SCHEMA}.record_label_set_conflict(JSONB) TO {MEMBER_ROLE};

-- A lead's change of a label set: {{name, document (null: delete), base_revision (0: a set new to the
-- server)}}. Returns {{status: ok | conflict, revision, document}} of the set as it is now.
CREATE FUNCTION {SCHEMA}.apply_label_set(change JSONB) RETURNS JSONB LANGUAGE plpgsql AS $$
DECLARE
    current {SCHEMA}.label_set;
    revision INTEGER;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('label_set:' || (change->>'name')));
    SELECT * INTO current FROM {SCHEMA}.label_set WHERE name = change->>'name' FOR UPDATE;
    IF coalesce(current.revision, 0) <> (change->>'base_revision')::INTEGER THEN
        PERFORM {SCHEMA}.record_label_set_conflict(change);
        RETURN jsonb_build_object('status', 'conflict', 'revision', coalesce(current.revision, 0),
                                  'document', current.document);
    END IF;
    IF jsonb_typeof(change->'document') IS DISTINCT FROM 'object' THEN
        DELETE FROM {SCHEMA}.label_set WHERE name = change->>'name';
        RETURN jsonb_build_object('status', 'ok', 'revision', 0, 'document', NULL);
    END IF;
    INSERT INTO {SCHEMA}.label_set (name, document) VALUES (change->>'name', change->'document')
        ON CONFLICT (name) DO UPDATE SET document = excluded.document,
            revision = {SCHEMA}.label_set.revision + 1, updated_by = current_user, updated_at = now()
        RETURNING {SCHEMA}.label_set.revision INTO revision;
    RETURN jsonb_build_object('status', 'ok', 'revision', revision, 'document', change->'document');
END $$;
"""

MIGRATIONS: list[str] = [V1, V2, V3, V4, V5, V6, V7]
LATEST_VERSION = len(MIGRATIONS)


def migration_sql(number: int) -> str:
    """The SQL of migration `number` (1-based)."""
    return MIGRATIONS[number - 1]
