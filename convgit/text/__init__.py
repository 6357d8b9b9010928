"""Text and pictures for people, made from values the layers below give: each command's words
(``render``, ``reports``), a search's results (``found``), a message as a person reads it
(``readable``), where each entry of a tree is drawn (``layout``), both tracks side by side
(``tracks``), and the HTML page (``sessionpage``, ``html``, with its assets in ``page/``)."""
