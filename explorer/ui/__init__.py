"""The dashboard's Streamlit side: the only part of ``explorer`` that imports streamlit.

From a slider to its pixels, in four named steps:

1. **A setting** is a ``Param`` of its lesson (``explorer.lessons.<name>.PARAMS``). The page draws it with
   ``control.draw(param, where)``, which puts its value in the session's state under ``param.key`` (a move runs the
   setting's ``control.ON_CHANGE``, or the callback given to ``draw``), and reads every value of its lesson with
   ``control.values(lesson)``.
2. **The figures at those settings** are ``lesson.figures(values)``: one ``Spec`` per figure, saying which of the
   lesson's ``Figure``s (compute → data → draw) and its inputs. What the page says beside them comes from the same
   lesson's ``@says`` functions, given the figures' data.
3. **A figure on the page** is ``figure.show_spec(spec)``: its data (``cache.spec_data``, kept per compute and
   inputs), drawn and styled once per data, language, theme and mode (``figure.DRAWN``; a followed figure's frames in
   ``figure.FOLLOWED``), handed to ``st.plotly_chart`` as a ready dict (``internals.ReadyFigure``).
4. **In the browser** plotly.js draws it; while the main figure's slider is dragged, ``web/follow.mjs`` plays the
   frames sent with it, with no round trip to the server.

A control whose move changes only part of a page reruns that part alone (``page.page_part``, a fragment); every
name of Streamlit or plotly that is not public is used in ``internals`` only.
"""
