"""Batch answering: question files in, one answer record per question out, resumably."""
