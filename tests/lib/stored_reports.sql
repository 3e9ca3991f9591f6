CREATE TEMP VIEW IF NOT EXISTS stored_reports AS
  SELECT metric_id, event_time, report_id, version, bit, labelset_id, support, firsts
    FROM keyed.reports
  UNION ALL
  SELECT metric_id, event_time, report_id, version, bit, labelset_id, support, firsts
    FROM main.recent_reports r WHERE NOT EXISTS (SELECT 1 FROM keyed.watermarks w WHERE
      w.metric_id = r.metric_id AND w.event_time = r.event_time AND (r.seq <= w.moved_seq OR
      (r.seq <= w.last_seq AND r.report_id <= w.last_id)));
