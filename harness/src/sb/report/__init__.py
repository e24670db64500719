"""Reports over results documents. Only `sb.report.terminal` talks to the terminal."""
