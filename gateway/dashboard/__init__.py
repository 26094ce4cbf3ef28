"""The memory web page: what tierclaw remembers about each person, to look at, fix and remove
(``tierclaw dashboard``; ``tierclaw gateway`` serves it too when ``dashboard.enabled``)."""
