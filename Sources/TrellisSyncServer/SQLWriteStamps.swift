/// The PL/pgSQL that lets changes made with SQL take part in the conflict rules like a
/// client's (docs/SYNC.md, "Changes made with SQL"): a write by SQL (a transaction that did not
/// set `trellis.client_id`, which only the server sets) gets a timestamp later than every
/// timestamp of the row and the server's clock, stamped on each field it changed (and on each
/// changed key of a map or embedded document); a delete by SQL leaves a tombstone with such a
/// timestamp. The client id part of those timestamps is `sql`.
enum SQLWriteStamps {
    static let functions = [
        """
        CREATE OR REPLACE FUNCTION trellis_sql_stamp(meta jsonb) RETURNS text LANGUAGE plpgsql AS $$
        DECLARE
          newest text;
          ms bigint := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
          counter int := 0;
        BEGIN
          SELECT max(value) INTO newest FROM jsonb_each_text(coalesce(meta, '{}'::jsonb))
          WHERE value ~ '^[0-9]{16}-[0-9]{5}-';
          IF newest IS NOT NULL AND substr(newest, 1, 16)::bigint >= ms THEN
            ms := substr(newest, 1, 16)::bigint;
            counter := substr(newest, 18, 5)::int + 1;
            IF counter > 99999 THEN
              ms := ms + 1;
              counter := 0;
            END IF;
          END IF;
          RETURN lpad(ms::text, 16, '0') || '-' || lpad(counter::text, 5, '0') || '-sql';
        END $$
        """,
        """
        CREATE OR REPLACE FUNCTION trellis_stamp_sql_write() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
          stamp text;
          field_name text;
          sub_key text;
          old_doc jsonb := '{}'::jsonb;
          meta jsonb;
        BEGIN
          IF coalesce(current_setting('trellis.client_id', true), '') <> '' THEN
            RETURN NEW;
          END IF;
          IF TG_OP = 'UPDATE' THEN
            old_doc := OLD.doc;
            meta := coalesce(OLD._meta, '{}'::jsonb);
          ELSE
            meta := coalesce(NEW._meta, '{}'::jsonb);
          END IF;
          stamp := trellis_sql_stamp(meta);
          FOR field_name IN SELECT jsonb_object_keys(NEW.doc) UNION SELECT jsonb_object_keys(old_doc) LOOP
            CONTINUE WHEN (NEW.doc -> field_name) IS NOT DISTINCT FROM (old_doc -> field_name);
            meta := meta || jsonb_build_object(field_name, stamp);
            FOR sub_key IN
              SELECT jsonb_object_keys(CASE WHEN jsonb_typeof(NEW.doc -> field_name) = 'object'
                                            THEN NEW.doc -> field_name ELSE '{}'::jsonb END)
              UNION
              SELECT jsonb_object_keys(CASE WHEN jsonb_typeof(old_doc -> field_name) = 'object'
                                            THEN old_doc -> field_name ELSE '{}'::jsonb END)
            LOOP
              IF (NEW.doc -> field_name -> sub_key) IS DISTINCT FROM (old_doc -> field_name -> sub_key) THEN
                meta := meta || jsonb_build_object(field_name || '.' || sub_key, stamp);
              END IF;
            END LOOP;
          END LOOP;
          NEW._meta := meta;
          RETURN NEW;
        END $$
        """,
    ]
}
