/// Parsley's SQL functions on PostgreSQL: typed views of jsonb values (so comparisons are like with like), the
/// JSON type names the dialect-neutral compiler uses, `$text` scoring, and great-circle and polygon tests.
/// Plain SQL functions marked IMMUTABLE, so the planner inlines them.
enum PostgresFunctions {
    static let statements: [String] = [
        """
        CREATE OR REPLACE FUNCTION parsley_text(v jsonb) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
        $$ SELECT CASE WHEN jsonb_typeof(v) = 'string' THEN v #>> '{}' END $$
        """,
        """
        CREATE OR REPLACE FUNCTION parsley_num(v jsonb) RETURNS double precision LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
        $$ SELECT CASE jsonb_typeof(v) WHEN 'number' THEN (v #>> '{}')::double precision
             WHEN 'boolean' THEN CASE WHEN v = 'true'::jsonb THEN 1 ELSE 0 END END $$
        """,
        """
        CREATE OR REPLACE FUNCTION parsley_json_type(v jsonb) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
        $$ SELECT CASE jsonb_typeof(v) WHEN 'string' THEN 'text'
             WHEN 'number' THEN CASE WHEN (v #>> '{}') ~ '^-?[0-9]+$' THEN 'integer' ELSE 'real' END
             WHEN 'boolean' THEN v #>> '{}' WHEN 'null' THEN 'null' WHEN 'object' THEN 'object' WHEN 'array' THEN 'array' END $$
        """,
        """
        CREATE OR REPLACE FUNCTION parsley_geo_distance(p jsonb, lat double precision, lng double precision)
        RETURNS double precision LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
        $$ SELECT 2 * asin(sqrt(least(1.0,
             power(sin(radians(lat - (p->>'latitude')::double precision) / 2), 2)
             + cos(radians(lat)) * cos(radians((p->>'latitude')::double precision))
               * power(sin(radians(lng - (p->>'longitude')::double precision) / 2), 2)))) $$
        """,
        """
        CREATE OR REPLACE FUNCTION parsley_polygon_contains(poly jsonb, pt jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
        $$ SELECT CASE WHEN poly IS NULL OR pt IS NULL OR jsonb_typeof(poly->'coordinates') IS DISTINCT FROM 'array'
               OR jsonb_array_length(poly->'coordinates') < 3 THEN false
             ELSE (SELECT ('(' || string_agg('(' || (c->>0) || ',' || (c->>1) || ')', ',' ORDER BY i) || ')')::polygon
                   FROM jsonb_array_elements(poly->'coordinates') WITH ORDINALITY AS e(c, i))
                  @> point((pt->>'latitude')::double precision, (pt->>'longitude')::double precision) END $$
        """,
        """
        CREATE OR REPLACE FUNCTION parsley_text_score(t text, term text, case_sensitive bigint) RETURNS double precision
        LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
        DECLARE
          words text[];
          q text;
          hits bigint;
          score double precision := 0;
          seen boolean := false;
        BEGIN
          IF t IS NULL OR term IS NULL THEN RETURN 0; END IF;
          IF case_sensitive = 0 THEN t := lower(t); term := lower(term); END IF;
          words := regexp_split_to_array(t, '[^[:alnum:]]+');
          FOREACH q IN ARRAY regexp_split_to_array(term, '[^[:alnum:]]+') LOOP
            CONTINUE WHEN q = '';
            seen := true;
            SELECT count(*) INTO hits FROM unnest(words) AS w
              WHERE w = q OR (length(q) >= 3 AND left(w, length(q)) = q);
            IF hits = 0 THEN RETURN 0; END IF;
            score := score + hits;
          END LOOP;
          IF NOT seen THEN RETURN 0; END IF;
          RETURN score;
        END $$
        """,
    ]
}
