"""Gc's git and packing: re-parenting kept commits, what git reaches, deleting what nothing
does."""
